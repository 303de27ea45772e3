// CUDA and cuBLASLt failures as Status: the status name, the call, the call site and what was
// being done (the problem shape). Out of memory becomes RESOURCE_EXHAUSTED.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "fp8dot/status.h"

namespace fp8dot::cuda {

Status CudaCallStatus(cudaError_t error, const char* call, const char* file, int line,
                      const std::string& context);
Status CublasCallStatus(cublasStatus_t status, const char* call, const char* file, int line,
                        const std::string& context);

const char* CublasStatusName(cublasStatus_t status);

}  // namespace fp8dot::cuda

// FP8_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(...), context): `context` is a std::string or char*
// naming the problem ("batch=1 M=64 N=64 K=256 ..."); evaluated only on failure.
#define FP8_CUDA_RETURN_IF_ERROR(call, context)                                         \
  do {                                                                                  \
    cudaError_t fp8_cuda_error_ = (call);                                               \
    if (fp8_cuda_error_ != cudaSuccess) {                                               \
      return ::fp8dot::cuda::CudaCallStatus(fp8_cuda_error_, #call, __FILE__, __LINE__, \
                                            (context));                                 \
    }                                                                                   \
  } while (0)

#define FP8_CUBLAS_RETURN_IF_ERROR(call, context)                                            \
  do {                                                                                       \
    cublasStatus_t fp8_cublas_status_ = (call);                                              \
    if (fp8_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                       \
      return ::fp8dot::cuda::CublasCallStatus(fp8_cublas_status_, #call, __FILE__, __LINE__, \
                                              (context));                                    \
    }                                                                                        \
  } while (0)

// After a kernel launch: the launch error (bad configuration), not the kernel's outcome.
#define FP8_CUDA_RETURN_IF_LAUNCH_FAILED(kernel_name, context) \
  FP8_CUDA_RETURN_IF_ERROR(cudaGetLastError(), std::string(kernel_name) + ": " + (context))
