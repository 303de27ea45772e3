// The quantisation rule of include/fp8dot/quantize.h in one place, for host and device code
// alike: the CPU backend and the CUDA kernels call these and nothing else, so they agree bit for
// bit.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define FP8DOT_HOST_DEVICE __host__ __device__
#else
#define FP8DOT_HOST_DEVICE
#endif

namespace fp8dot::quantize_rule {

// x's bits, and the float of given bits.
FP8DOT_HOST_DEVICE inline uint32_t Bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

// |x| as bits that order like the magnitudes they encode: non-negative floats compare as
// unsigned integers, and every NaN (sign cleared) sits above +inf. So the amax of a group is the
// unsigned max of these, NaN wins, and the max is an atomicMax on the GPU.
FP8DOT_HOST_DEVICE inline uint32_t MagnitudeBits(float x) { return Bits(x) & 0x7fffffffu; }

FP8DOT_HOST_DEVICE inline float FloatFromBits(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

// The dequantisation scale for a group: amax · 2^margin / type_max in f32 (the multiplication
// by a power of two is exact), 1 when amax is zero or NaN (no scale is better than any other).
FP8DOT_HOST_DEVICE inline float ScaleFromAmax(float amax, float margin_factor, float type_max) {
  const float scale = amax * margin_factor / type_max;
  return amax > 0.0f ? scale : 1.0f;
}

// A given scale (delayed scaling's, from an amax history) when it is a positive finite number;
// otherwise (the history has no amax yet) the scale of this input's own amax: current scaling.
FP8DOT_HOST_DEVICE inline bool IsUsableGivenScale(float scale) {
  return scale > 0.0f && scale <= 3.4028234663852886e38f;  // false for NaN and inf
}
FP8DOT_HOST_DEVICE inline float ResolveGivenScale(float given, float amax, float margin_factor,
                                                  float type_max) {
  return IsUsableGivenScale(given) ? given : ScaleFromAmax(amax, margin_factor, type_max);
}

// The multiplier a group's values are cast with: 1 / scale, correctly rounded to f32.
FP8DOT_HOST_DEVICE inline float InverseScale(float scale) {
#ifdef __CUDA_ARCH__
  return __frcp_rn(scale);
#else
  return 1.0f / scale;
#endif
}

// The value that is rounded (to nearest even, saturating) into the FP8 type: x times the
// inverse scale, one f32 multiplication. (A multiplication, not x / scale: on the GPU a division
// per element would cost more than the memory traffic, and the one extra rounding is 2^-24 of
// the value, far below FP8's 2^-4.)
FP8DOT_HOST_DEVICE inline float ScaledForCast(float x, float inverse_scale) {
  return x * inverse_scale;
}

}  // namespace fp8dot::quantize_rule
