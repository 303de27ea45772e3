// Fp8GemmRewriter: fuses FP8 dequantise -> dot -> epilogue -> quantise chains into one
// __cublas$lt$matmul$f8 custom call, as XLA's GEMM rewriter does, and more.
//
// The chain, in HLO (every step but the dot optional):
//
//   a_f32 = f32[M,K] convert(f8e4m3fn[M,K] a)             dequantise A (any float type: f32,
//   a_dq  = f32[M,K] multiply(a_f32, broadcast(a_scale))    bf16, f16; or divide by the scale)
//   a_mv  = ...  transpose/reshape/bitcast/copy/slice/pad(0)/broadcast/dynamic-slice(a_dq)
//   (same for B)
//   d     = f32[M,N] dot(a_mv, b_mv), ..., operand_precision={default,default}
//   d1    = multiply(d, broadcast(constant alpha))         alpha
//   d2    = add(d1, broadcast(bias[N])) | add(d1, C)        BIAS epilogue | beta = 1
//   d3    = maximum(d2, broadcast(constant 0))              RELU
//   q     = f8e4m3fn convert(clamp(-448, d3 / broadcast(s), 448))   FP8 output with scale_d
//   amax  = f32[] reduce(abs(d3), init, to_apply=max)       damax_output
//   (or, without quantisation: bf16 convert(d3)             D written as bf16 / f16)
//
// becomes
//
//   gemm = (f8e4m3fn[M,N], f32[], s8[0]) custom-call(a', b', [C], a_scale, b_scale, [scale_d],
//          [bias]), custom_call_target="__cublas$lt$matmul$f8", backend_config={...}
//
// where a', b' are the FP8 values with the data movement re-applied in FP8, the scales are f32
// scalars (1 when the operand had none, 1/s when the HLO divided by s), and backend_config holds
// XLA's gemm_backend_config with the dot's dimension numbers and its precision_config unchanged:
// the accumulation is decided at execution, by ResolveAccumulation, like every other dot.
//
// Beyond XLA: dequantisation in bf16/f16 (XLA leaves those as bf16 GEMMs), and Flax's
// quantise -> dequantise chains (convert<f8>(clamp(x / s)) feeding convert -> multiply), whose
// quantisation then runs once and whose dot runs in FP8.
//
// Not fused (and the reason kept in near_misses()): e5m2 x e5m2 (no cuBLASLt FP8 kernel),
// operands that are not FP8 behind a dequantisation, epilogues that would make an invalid
// DotSpec (those are dropped step by step until the spec is valid).
#pragma once

#include <string>
#include <vector>

#include "fp8dot/hlo/gemm_backend_config.h"  // kCublasLtMatmulF8Target
#include "fp8dot/hlo/hlo_ir.h"

namespace fp8dot::hlo {

class Fp8GemmRewriter {
 public:
  // Rewrites every matching dot in every computation. Returns whether the module changed.
  StatusOr<bool> Run(HloModule* module);

  // One line per FP8-looking dot left as it was: "%dot.3 (line 12): e5m2 x e5m2 ...".
  const std::vector<std::string>& near_misses() const { return near_misses_; }

 private:
  StatusOr<bool> RewriteDot(HloInstruction* dot);
  std::vector<std::string> near_misses_;
};

}  // namespace fp8dot::hlo
