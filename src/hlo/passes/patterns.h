// Pure matchers for the FP8 GEMM rewriter: each recognises one fragment of the
// dequantise -> dot -> quantise chain and reports what it found, without changing the module.
// Fragments are named after how they read in HLO; fp8_gemm_rewriter.h composes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fp8dot/hlo/hlo_ir.h"

namespace fp8dot::hlo::patterns {

bool IsFp8(const HloInstruction* instruction);
bool IsScalarArray(const HloInstruction* instruction);

// The single element behind a uniform value:
//   scalar_operand := x (one element: f32[] or f32[1]) | broadcast(scalar_operand)
//                   | reshape(scalar_operand) | bitcast(..) | convert(..)
HloInstruction* StripToScalar(HloInstruction* instruction);
// The value of a scalar constant seen through broadcast/convert, e.g. broadcast(constant(448)).
std::optional<double> ScalarConstantValue(const HloInstruction* instruction);

// Ops that only move data, which the rewriter may move from the dequantised value onto the FP8
// value (XLA's list): bitcast, broadcast, copy, reshape, transpose, slice, dynamic-slice, and pad
// with a zero padding value.
bool IsDataMovement(const HloInstruction* instruction);

// One dot operand traced back to FP8 data:
//   operand  := movement* dequant
//   dequant  := fp8 | convert(fp8) | multiply(convert(fp8), broadcast(s)) (either order)
//             | divide(convert(fp8), broadcast(s))
// where fp8 is any FP8-typed instruction (a parameter, or Flax's convert(clamp(x / s)) quantiser)
// and s is a scalar of any float type.
struct Dequantization {
  HloInstruction* fp8 = nullptr;
  HloInstruction* scale = nullptr;  // nullptr when the operand is not scaled
  bool scale_divides = false;       // convert(fp8) / s rather than * s
  // Data-movement ops between the dequantisation and the dot, the one nearest the fp8 value
  // first (the order to re-apply them in).
  std::vector<HloInstruction*> movement;
};
// nullopt with `why` set when `operand` is not FP8 data behind a dequantisation.
std::optional<Dequantization> MatchDequantization(HloInstruction* operand, std::string* why);

// What follows a dot, fused in this order when present (each step's value has no other user):
//   alpha   := multiply(d, broadcast(constant c))
//   bias    := add(d, broadcast(vector v)) with v over the output columns   -> BIAS
//            | add(d, matrix C)                                             -> beta = 1
//   relu    := maximum(d, broadcast(constant 0))                            -> RELU
//   gelu    := d * (0.5 * (1 + tanh(0.7978846 * (d + 0.044715 * d^3))))     -> GELU
//              (jax.nn.gelu(approximate=True); products in either operand order)
//   quant   := convert<f8>(clamp(broadcast(-max), d / broadcast(s) | d * broadcast(s),
//                                broadcast(max)))                           -> FP8 D, scale_d
//              the clamp may also be minimum(maximum(x, -max), max) (either nesting, operands
//              in any order) or jnp.clip's call(d / s, -max, max), to_apply=clip
//   amax    := reduce(abs(d), init, to_apply=maximum), alongside quant      -> damax_output
//   out     := convert<bf16|f16>(d) of an f32 d, when there is no quant      -> D's type
struct GemmEpilogue {
  double alpha = 1.0;
  HloInstruction* vector_bias = nullptr;  // v
  HloInstruction* matrix_bias = nullptr;  // C
  bool relu = false;
  bool gelu = false;
  HloInstruction* output_scale = nullptr;  // s of the quantisation (scalar)
  bool output_scale_divides = false;
  HloInstruction* quantized = nullptr;  // the convert<f8> that becomes the GEMM's output
  HloInstruction* converted = nullptr;  // or a convert<bf16|f16> of an f32 D that does
  HloInstruction* amax = nullptr;       // the reduce that becomes the GEMM's amax output
  HloInstruction* last = nullptr;       // the last fused instruction before quantisation
};

// How many epilogue steps MatchGemmEpilogue may take; the rewriter retries with fewer when the
// full epilogue makes an invalid DotSpec.
enum class EpilogueDepth { kNone, kAlpha, kBias, kActivation, kQuantization };
GemmEpilogue MatchGemmEpilogue(HloInstruction* dot, EpilogueDepth depth);

// The instruction the fused GEMM's D replaces: the quantisation, the output convert, or the last
// fused step.
HloInstruction* GemmResult(const GemmEpilogue& epilogue);

// The epilogue's cuBLASLt name from its bias and activation.
Epilogue EpilogueKind(const GemmEpilogue& epilogue);

}  // namespace fp8dot::hlo::patterns
