// The activations a quantisation can apply to its input on the way in (QuantizeActivation in
// include/fp8dot/quantize.h), in one place for host and device code: the CPU backend and the
// CUDA kernels call these and nothing else, so the FP8 operand they produce agrees bit for bit.
//
// Bit-identity rules out the platforms' own expf (the CUDA one and glibc's round differently in
// the last place), so exp is computed here from operations both sides round the same way: f32
// fma, multiplication, addition and reciprocal, each correctly rounded. On the device they are
// the _rn intrinsics, which nvcc never contracts into an fma; on the host the library is built
// with -ffp-contract=off (CMakeLists.txt) for the same reason.
#pragma once

#include <cstdint>
#include <cstring>

#include "dot/quantize_rule.h"  // FP8DOT_HOST_DEVICE

namespace fp8dot::activation_rule {

FP8DOT_HOST_DEVICE inline float Fma(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
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
// 1 / x, correctly rounded (on the GPU a reciprocal and a multiplication cost a third of a
// division, and the kernels that call this are bound by instruction issue).
FP8DOT_HOST_DEVICE inline float Reciprocal(float x) {
#ifdef __CUDA_ARCH__
  return __frcp_rn(x);
#else
  return 1.0f / x;
#endif
}

// 2^k for an integer k in [-126, 127], exactly.
FP8DOT_HOST_DEVICE inline float PowerOfTwo(int k) {
  const uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

// e^x within 1 ulp for x in [-87, 88] (x = k·ln2 + r, |r| <= ln2/2, e^r by a degree-8 Taylor
// polynomial, whose truncation error, under 2^-31, is far below f32's half ulp); 0 below -87 and
// +inf above 88, where SwiGlu below needs no more (1 + e^x rounds to 1 for x < -17, and x > 88 only
// makes the SiLU of a gate below -88, whose magnitude under 1e-36 no FP8 scale keeps).
FP8DOT_HOST_DEVICE inline float Exp(float x) {
  if (!(x > -87.0f)) return x != x ? x : 0.0f;  // NaN passes through
  if (x > 88.0f) return __builtin_huge_valf();
  constexpr float kLog2E = 1.44269504f;
  constexpr float kLn2High = 0.693145752f;  // ln 2 in 16 bits: k · kLn2High is exact
  constexpr float kLn2Low = 1.42860677e-06f;
  // k = round(x / ln 2) by the 1.5 · 2^23 trick: adding it rounds to an integer exactly.
  constexpr float kRound = 12582912.0f;
  const float shifted = Fma(x, kLog2E, kRound);
  const float k = Add(shifted, -kRound);
  float r = Fma(-k, kLn2High, x);
  r = Fma(-k, kLn2Low, r);
  float p = 1.0f / 40320.0f;
  p = Fma(p, r, 1.0f / 5040.0f);
  p = Fma(p, r, 1.0f / 720.0f);
  p = Fma(p, r, 1.0f / 120.0f);
  p = Fma(p, r, 1.0f / 24.0f);
  p = Fma(p, r, 1.0f / 6.0f);
  p = Fma(p, r, 0.5f);
  p = Fma(p, r, 1.0f);
  p = Fma(p, r, 1.0f);
  // k is in [-126, 127] here; scaling by 2^k is exact except where e^x is subnormal, which
  // the range above excludes.
  return Mul(p, PowerOfTwo(static_cast<int>(k)));
}

// SiLU(gate) · up, the SwiGLU product of a gated MLP (the input of its down projection), in
// f32: gate · (1 / (1 + e^-gate)) · up. The caller rounds it to the input's type, as the
// framework's own elementwise kernel stores it, and quantises that value.
FP8DOT_HOST_DEVICE inline float SwiGlu(float gate, float up) {
  const float silu = Mul(gate, Reciprocal(Add(1.0f, Exp(-gate))));
  return Mul(silu, up);
}

}  // namespace fp8dot::activation_rule
