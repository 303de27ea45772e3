// The streaming kernel behind memory_floor.h.
#include "bench/memory_floor.h"

namespace fp8dot::bench {
namespace {

// Reads A then B as one sequence of 16-byte vectors, kLoadsInFlight independent loads per
// thread at a time, then writes D; grid-stride.
template <int kLoadsInFlight>
__global__ void memory_floor_kernel(const uint4* a, int64_t a_count, const uint4* b,
                                    int64_t b_count, uint4* d, int64_t d_count, unsigned* sink) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t read_count = a_count + b_count;
  unsigned hash = 0;
  for (int64_t base = first; base < read_count; base += stride * kLoadsInFlight) {
    uint4 v[kLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int64_t i = base + u * stride;
      v[u] = i >= read_count ? uint4{} : i < a_count ? __ldg(a + i) : __ldg(b + (i - a_count));
    }
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) hash ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (int64_t i = first; i < d_count; i += stride) d[i] = uint4{hash, 0, 0, 0};
  if (hash == 0x9e3779b9u) sink[blockIdx.x] = hash;
}

}  // namespace

Status LaunchMemoryFloor(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes, void* d,
                         int64_t d_bytes, unsigned* sink, int blocks, int threads,
                         int loads_in_flight, cudaStream_t stream) {
  if (a_bytes % 16 != 0 || b_bytes % 16 != 0 || d_bytes % 16 != 0) {
    return InvalidArgument("memory floor: byte counts must be multiples of 16");
  }
  auto* kernel = loads_in_flight >= 8 ? memory_floor_kernel<8> : memory_floor_kernel<4>;
  kernel<<<blocks, threads, 0, stream>>>(static_cast<const uint4*>(a), a_bytes / 16,
                                         static_cast<const uint4*>(b), b_bytes / 16,
                                         static_cast<uint4*>(d), d_bytes / 16, sink);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    return Internal("memory_floor_kernel: %s", cudaGetErrorString(error));
  }
  return OkStatus();
}

}  // namespace fp8dot::bench
