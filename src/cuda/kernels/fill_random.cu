// The random fill kernel (see fill_random.h) and its launcher.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda/cuda_status.h"
#include "cuda/kernels/element_access.cuh"
#include "cuda/kernels/fill_random.h"

namespace fp8dot::cuda {
namespace {

constexpr int kThreads = 256;

// splitmix64: a counter-based hash, so every element is independent of the launch shape.
__device__ inline uint64_t Hash(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_random_kernel(void* data, DType type, int64_t count, uint64_t seed,
                                   float low, float high) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint64_t h = Hash(seed * 0x100000001b3ull + static_cast<uint64_t>(i));
    const float u = static_cast<float>(h >> 40) * 0x1.0p-24f;  // [0, 1)
    float value = low + (high - low) * u;
    if (value == 0.0f) value = high;  // never zero
    StoreAsType(data, type, i, value);
  }
}

}  // namespace

Status LaunchFillRandom(void* data, DType type, int64_t count, uint64_t seed, float low,
                        float high, cudaStream_t stream) {
  if (count <= 0) return OkStatus();
  if (data == nullptr) return Internal("fill_random: null pointer");
  const int blocks = static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 8192));
  fill_random_kernel<<<blocks, kThreads, 0, stream>>>(data, type, count, seed, low, high);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("fill_random_kernel", DTypeName(type));
  return OkStatus();
}

}  // namespace fp8dot::cuda
