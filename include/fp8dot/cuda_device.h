// Whether the CUDA backend was built, and which GPU (if any) this process can use.
#pragma once

#include <string>

#include "fp8dot/status.h"

namespace fp8dot {

struct CudaDeviceInfo {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessor_count = 0;
  long long memory_bytes = 0;
  // Peak clocks and DRAM bandwidth as the driver reports them (0 where it does not): the own
  // GEMM's tile choice weighs DRAM time in SM clocks.
  int sm_clock_khz = 0;
  double memory_bytes_per_second = 0;  // memory clock x 2 (double data rate) x bus width
};

// True when this build contains the CUDA backend (nvcc was found at configure time).
bool CudaBackendBuilt();
// The calling thread's current device (CurrentCudaDevice), which plans are made for.
// UNAVAILABLE with the reason when the backend is not built, no driver or GPU is
// present, or the GPU is older than Hopper (sm_90).
StatusOr<CudaDeviceInfo> QueryCudaDevice();
// The calling thread's current CUDA device (cudaGetDevice): the device plans are made for.
StatusOr<int> CurrentCudaDevice();

}  // namespace fp8dot
