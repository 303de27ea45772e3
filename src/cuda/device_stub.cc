// Used when the build has no CUDA compiler: the CUDA layer's API exists and says why it can't run.
#include "fp8dot/cuda_device.h"

namespace fp8dot {

bool CudaBackendBuilt() { return false; }

namespace {

Status NotBuilt() {
  return Unavailable(
      "this fp8dot build has no CUDA backend (nvcc was not found at configure time)");
}

}  // namespace

StatusOr<CudaDeviceInfo> QueryCudaDevice() { return NotBuilt(); }
StatusOr<int> CurrentCudaDevice() { return NotBuilt(); }

}  // namespace fp8dot
