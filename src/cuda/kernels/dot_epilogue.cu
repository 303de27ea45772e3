// The epilogue kernel (see dot_epilogue.h) and its launcher.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda/cuda_status.h"
#include "cuda/kernels/dot_epilogue.h"
#include "cuda/kernels/element_access.cuh"

namespace fp8dot::cuda {
namespace {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "amax is reduced per warp");

__device__ inline float Load(const void* data, DType type, int64_t i) {
  switch (type) {
    case DType::kBF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]);
    case DType::kF16:
      return __half2float(static_cast<const __half*>(data)[i]);
    case DType::kF32:
      return static_cast<const float*>(data)[i];
    default:
      return __int_as_float(0x7fc00000);  // the launcher admits no other type
  }
}

// GELU, tanh approximation (what cuBLASLt's GELU epilogue computes).
__device__ inline float GeluTanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

// One thread per output element, grid-stride over the flattened [batch][m][n] output.
__global__ void dot_epilogue_kernel(const EpilogueParams p) {
  const int64_t count = p.batch * p.m * p.n;
  const float scale_d = p.scale_d != nullptr ? *p.scale_d : 1.0f;
  const bool fp8_out = p.out_type == DType::kF8E4M3FN || p.out_type == DType::kF8E5M2;
  unsigned int amax_bits = 0;  // |D| >= 0, so float order = unsigned order (NaN sorts highest)
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t col = i % p.n;
    const int64_t row = (i / p.n) % p.m;
    const int64_t b = i / (p.n * p.m);
    float scale = p.alpha;
    if (p.lhs_scale != nullptr) scale *= p.lhs_scale[p.lhs_scale_per_row ? row : 0];
    if (p.rhs_scale != nullptr) scale *= p.rhs_scale[p.rhs_scale_per_column ? col : 0];
    float d = scale * p.s[(b * p.m + row) * p.s_ld + col];
    if (p.c != nullptr) d += p.beta * Load(p.c, p.c_type, b * p.c_batch_stride + row * p.c_ld + col);
    if (p.bias != nullptr) d += Load(p.bias, p.bias_type, col);
    if (p.activation == Activation::kRelu) d = d > 0.0f ? d : 0.0f;
    if (p.activation == Activation::kGelu) d = GeluTanh(d);
    amax_bits = max(amax_bits, __float_as_uint(fabsf(d)));
    StoreAsType(p.out, p.out_type, i, fp8_out ? d * scale_d : d);
  }
  if (p.amax != nullptr) {
    amax_bits = __reduce_max_sync(0xffffffffu, amax_bits);
    if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<unsigned int*>(p.amax), amax_bits);
  }
}

bool IsLoadable(DType type) {
  return type == DType::kBF16 || type == DType::kF16 || type == DType::kF32;
}

}  // namespace

Status LaunchEpilogue(const EpilogueParams& p, cudaStream_t stream, const std::string& context) {
  if (p.s == nullptr || p.out == nullptr || p.m <= 0 || p.n <= 0 || p.batch <= 0 || p.s_ld < p.n) {
    return Internal("epilogue: bad arguments [%s]", context.c_str());
  }
  if ((p.c != nullptr && (!IsLoadable(p.c_type) || p.c_ld < p.n)) ||
      (p.bias != nullptr && !IsLoadable(p.bias_type)) || p.out_type == DType::kF64) {
    return Unimplemented("epilogue: types C %s, bias %s, output %s are not supported [%s]",
                         DTypeName(p.c_type), DTypeName(p.bias_type), DTypeName(p.out_type),
                         context.c_str());
  }
  const int64_t count = p.batch * p.m * p.n;
  const int blocks =
      static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 132 * 16));
  dot_epilogue_kernel<<<blocks, kThreads, 0, stream>>>(p);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("dot_epilogue_kernel", context);
  return OkStatus();
}

}  // namespace fp8dot::cuda
