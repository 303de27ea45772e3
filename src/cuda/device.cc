#include <cuda_runtime.h>

#include "fp8dot/cuda_device.h"

namespace fp8dot {

bool CudaBackendBuilt() { return true; }

StatusOr<int> CurrentCudaDevice() {
  int device = 0;
  const cudaError_t error = cudaGetDevice(&device);
  if (error != cudaSuccess) {
    return Unavailable("no usable CUDA device: cudaGetDevice: %s (%s)", cudaGetErrorName(error),
                       cudaGetErrorString(error));
  }
  return device;
}

StatusOr<CudaDeviceInfo> QueryCudaDevice() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    return Unavailable("no usable CUDA device: cudaGetDeviceCount: %s (%s)",
                       cudaGetErrorName(error), cudaGetErrorString(error));
  }
  if (count == 0) return Unavailable("no CUDA device found");
  FP8_ASSIGN_OR_RETURN(const int device, CurrentCudaDevice());
  cudaDeviceProp properties{};
  error = cudaGetDeviceProperties(&properties, device);
  if (error != cudaSuccess) {
    return Unavailable("cudaGetDeviceProperties(%d): %s", device, cudaGetErrorString(error));
  }
  CudaDeviceInfo info;
  info.name = properties.name;
  info.compute_major = properties.major;
  info.compute_minor = properties.minor;
  info.multiprocessor_count = properties.multiProcessorCount;
  info.memory_bytes = static_cast<long long>(properties.totalGlobalMem);
  // Advisory figures for the tile choice: a driver that does not report them leaves them 0.
  int memory_clock_khz = 0, bus_width_bits = 0;
  if (cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device) !=
          cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; cleared so that later checks do not see it
    info.sm_clock_khz = memory_clock_khz = bus_width_bits = 0;
  }
  info.memory_bytes_per_second = 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8;
  if (info.compute_major < 9) {
    return Unavailable("GPU %s has compute capability %d.%d; fp8dot needs Hopper (9.0) or newer",
                       info.name.c_str(), info.compute_major, info.compute_minor);
  }
  return info;
}

}  // namespace fp8dot
