// fp8dot's own epilogue, used when cuBLASLt cannot fuse the requested one (a combination it
// rejects, or the upcast GEMM of e5m2 x e5m2): the GEMM writes S = (scaled) A.B in f32, and this
// kernel computes, per output element,
//   D = activation(alpha * scale_a[m] * scale_b[n] * S + beta * C + bias[n])
//   out = D, or saturate(D * scale_d) for FP8 outputs;  amax = max |D|
// exactly as src/cpu/dot_epilogue.cc does (in f32 rather than f64).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot::cuda {

enum class Activation { kNone, kRelu, kGelu };

struct EpilogueParams {
  const float* s = nullptr;  // [batch][m][s_ld]
  int64_t s_ld = 0;
  int64_t batch = 1, m = 0, n = 0;
  float alpha = 1.0f;
  // Operand scales the GEMM did not apply. Null = 1; per_index: one per row (lhs) / column (rhs).
  const float* lhs_scale = nullptr;
  bool lhs_scale_per_row = false;
  const float* rhs_scale = nullptr;
  bool rhs_scale_per_column = false;
  const void* c = nullptr;  // element (b, m, n) at b * c_batch_stride + m * c_ld + n, c_type
  DType c_type = DType::kF32;
  int64_t c_ld = 0, c_batch_stride = 0;
  float beta = 0.0f;
  const void* bias = nullptr;  // [n], bias_type
  DType bias_type = DType::kF32;
  Activation activation = Activation::kNone;
  void* out = nullptr;  // [batch][m][n] row-major, out_type
  DType out_type = DType::kF32;
  const float* scale_d = nullptr;  // FP8 outputs; null = 1
  float* amax = nullptr;           // must hold 0 (or an earlier max) before the launch
};

Status LaunchEpilogue(const EpilogueParams& params, cudaStream_t stream,
                      const std::string& context);

}  // namespace fp8dot::cuda
