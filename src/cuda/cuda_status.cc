#include "cuda/cuda_status.h"

#include <cstring>

namespace fp8dot::cuda {
namespace {

// "src/cuda/dot_plan.cc" rather than the absolute build path.
const char* ShortFile(const char* file) {
  const char* src = std::strstr(file, "src/");
  return src != nullptr ? src : file;
}

}  // namespace

const char* CublasStatusName(cublasStatus_t status) { return cublasLtGetStatusName(status); }

Status CudaCallStatus(cudaError_t error, const char* call, const char* file, int line,
                      const std::string& context) {
  // Clear the sticky "last error" of a failed launch so the next call does not report it again.
  (void)cudaGetLastError();
  const std::string message =
      StrFormat("%s (%s) in %s at %s:%d [%s]", cudaGetErrorName(error), cudaGetErrorString(error),
                call, ShortFile(file), line, context.c_str());
  if (error == cudaErrorMemoryAllocation) return ResourceExhausted("%s", message.c_str());
  if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver) {
    return Unavailable("%s", message.c_str());
  }
  return Internal("%s", message.c_str());
}

Status CublasCallStatus(cublasStatus_t status, const char* call, const char* file, int line,
                        const std::string& context) {
  const std::string message = StrFormat("%s in %s at %s:%d [%s]", CublasStatusName(status), call,
                                        ShortFile(file), line, context.c_str());
  if (status == CUBLAS_STATUS_ALLOC_FAILED) return ResourceExhausted("%s", message.c_str());
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_ARCH_MISMATCH) {
    return Unimplemented("%s", message.c_str());
  }
  return Internal("%s", message.c_str());
}

}  // namespace fp8dot::cuda
