// The activations a quantisation can apply to its input on the way in (QuantizeActivation in
// include/fp8dot/quantize.h), in one place for host and device code: the CPU backend and the
// CUDA kernels call these and nothing else, so the FP8 operand they produce agrees bit for bit.
//
// Bit-identity rules out the platforms' own expf (the CUDA one and glibc's round differently in
// the last place), so exp is computed here from operations both sides round the same way: f32
// fma, multiplication, addition, min/max and reciprocal, each correctly rounded, and integer
// bit operations. On the device they are the _rn intrinsics, which nvcc never contracts into an
// fma; on the host the library is built with -ffp-contract=off (CMakeLists.txt) for the same
// reason.
//
// The kernels that call this are bound by instruction issue (docs/quantize.md), so the rules
// have no branches and no float-to-integer conversion (a quarter-rate instruction on Hopper):
// about 20 instructions per element.
#pragma once

#include <cstdint>

#ifndef __CUDA_ARCH__
#include <cmath>
#endif

#include "dot/quantize_rule.h"  // FP8DOT_HOST_DEVICE, Bits, FloatFromBits

namespace fp8dot::activation_rule {

using quantize_rule::Bits;
using quantize_rule::FloatFromBits;

FP8DOT_HOST_DEVICE inline float Fma(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
FP8DOT_HOST_DEVICE inline float Mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
FP8DOT_HOST_DEVICE inline float Add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
// x clamped to [low, high]; NaN becomes `low` (fmax and fmin return the operand that is a
// number, on both sides).
FP8DOT_HOST_DEVICE inline float Clamp(float x, float low, float high) {
#ifdef __CUDA_ARCH__
  return fminf(fmaxf(x, low), high);
#else
  return std::fmin(std::fmax(x, low), high);
#endif
}

// 1 / d, correctly rounded, for d in [1, 2^126). On the GPU: the hardware's approximate
// reciprocal and one Newton step, which is __frcp_rn's own fast path and correctly rounded
// wherever 1/d is a normal number; __frcp_rn adds a range check and a slow path for the rest,
// which this range never takes.
FP8DOT_HOST_DEVICE inline float Reciprocal(float d) {
#ifdef __CUDA_ARCH__
  float approximate;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(approximate) : "f"(d));
  const float error = __fmaf_rn(-d, approximate, 1.0f);
  return __fmaf_rn(approximate, error, approximate);
#else
  return 1.0f / d;
#endif
}

// The range Exp takes its argument to: e^±87 and every result in between are normal floats.
constexpr float kExpLimit = 87.0f;

// e^x within 1 ulp for x in [-87, 87], and e^±87 beyond (NaN gives e^-87). x = k·ln2 + r with
// |r| <= ln2/2; e^r by a degree-7 Taylor polynomial, whose truncation error (under 2^-27) is
// below f32's half ulp; 2^k assembled from the integer that rounding x·log2(e) leaves in the
// low bits of a float.
FP8DOT_HOST_DEVICE inline float Exp(float x) {
  x = Clamp(x, -kExpLimit, kExpLimit);
  constexpr float kLog2E = 1.44269504f;
  constexpr float kLn2High = 0.693145752f;  // ln 2 in 16 bits: k · kLn2High is exact
  constexpr float kLn2Low = 1.42860677e-06f;
  // Adding 1.5 · 2^23 rounds x · log2(e) to the integer k, which lands in the float's low
  // mantissa bits: bits(shifted) = bits(1.5 · 2^23) + k.
  constexpr float kRound = 12582912.0f;
  const float shifted = Fma(x, kLog2E, kRound);
  const float k = Add(shifted, -kRound);
  float r = Fma(-k, kLn2High, x);
  r = Fma(-k, kLn2Low, r);
  float p = 1.0f / 5040.0f;
  p = Fma(p, r, 1.0f / 720.0f);
  p = Fma(p, r, 1.0f / 120.0f);
  p = Fma(p, r, 1.0f / 24.0f);
  p = Fma(p, r, 1.0f / 6.0f);
  p = Fma(p, r, 0.5f);
  p = Fma(p, r, 1.0f);
  p = Fma(p, r, 1.0f);
  // 2^k: the exponent field k + 127 (in [1, 253] here). bits(1.5 · 2^23) is a multiple of
  // 2^9, so shifting by 23 keeps exactly k's low bits.
  const float power_of_two = FloatFromBits((Bits(shifted) + 127u) << 23);
  return Mul(p, power_of_two);
}

// SiLU(gate) · up, the SwiGLU product of a gated MLP (the input of its down projection), in
// f32: gate · (1 / (1 + e^-gate)) · up. The caller rounds it to the input's type, as the
// framework's own elementwise kernel stores it, and quantises that value. Below a gate of -87,
// where SiLU's true value is under 1e-36 and no FP8 scale keeps it, the sigmoid stays at
// 1 / (1 + e^87); a NaN gate or up gives NaN; a gate of ±inf gives ±inf · up.
FP8DOT_HOST_DEVICE inline float SwiGlu(float gate, float up) {
  const float sigmoid = Reciprocal(Add(1.0f, Exp(-gate)));
  return Mul(Mul(gate, sigmoid), up);
}

// GELU in its tanh form, 0.5 · u · (1 + tanh(√(2/π) · (u + 0.044715 · u³))), in f32: the same
// value written as u · σ(2√(2/π) · u · (1 + 0.044715 · u²)), which has no cancellation where
// tanh is near -1 (1 + tanh(z) = 2σ(2z)). The caller rounds it to the input's type, as for
// SwiGlu. Below u of about -10, where GELU's true value is under 1e-36, the sigmoid stays at
// 1 / (1 + e^87); NaN gives NaN; ±inf gives ±inf.
FP8DOT_HOST_DEVICE inline float Gelu(float u) {
  constexpr float kTwiceSqrtTwoOverPi = 1.59576912f;  // 2 · √(2/π)
  constexpr float kCubic = 0.044715f;
  const float inner = Mul(u, Fma(kCubic, Mul(u, u), 1.0f));
  const float sigmoid = Reciprocal(Add(1.0f, Exp(-Mul(kTwiceSqrtTwoOverPi, inner))));
  return Mul(u, sigmoid);
}

}  // namespace fp8dot::activation_rule
