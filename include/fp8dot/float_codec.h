// Conversions between the narrow float types and f32/f64, bit-exact with ml_dtypes (and numpy
// for f16): round to nearest even, subnormals kept, NaN kept (with its sign), overflow to NaN
// (e4m3fn) or inf (e5m2, f16, bf16). f64 values go to FP8 and bf16 through f32 (two roundings,
// as a GPU narrowing an f32 accumulator, and ml_dtypes before 0.7); f64 to f16 rounds once, as
// numpy does. The saturating variants clamp finite overflow and infinities to ±max, which is what
// FP8 quantisation (cuBLASLt's D output, PTX cvt.satfinite) does.
#pragma once

#include <cstdint>

#include "fp8dot/dtype.h"

namespace fp8dot {

enum class Overflow {
  kIeee,      // out of range becomes inf, or NaN for types without inf (ml_dtypes behaviour)
  kSaturate,  // out of range and ±inf become ±max finite; NaN stays NaN
};

// Encodes `value` into the bit pattern of a narrow type (FP8, bf16 or f16), to nearest even (FP8
// and bf16 through f32, as above).
uint8_t EncodeF8E4M3FN(double value, Overflow overflow = Overflow::kIeee);
uint8_t EncodeF8E5M2(double value, Overflow overflow = Overflow::kIeee);
uint16_t EncodeBF16(double value, Overflow overflow = Overflow::kIeee);
uint16_t EncodeF16(double value, Overflow overflow = Overflow::kIeee);

// Decodes exactly (every narrow value is representable in f32).
float DecodeF8E4M3FN(uint8_t bits);
float DecodeF8E5M2(uint8_t bits);
float DecodeBF16(uint16_t bits);
float DecodeF16(uint16_t bits);

// Rounds `value` to the nearest value of `type` (returned widened to double).
double RoundToDType(double value, DType type, Overflow overflow = Overflow::kIeee);

// Element access into a raw buffer of `type`.
double LoadElement(DType type, const void* data, int64_t index);
void StoreElement(DType type, double value, void* data, int64_t index,
                  Overflow overflow = Overflow::kIeee);

// Table of all 256 FP8 values as f32, for hot loops that upcast.
const float* Fp8DecodeTable(DType type);

}  // namespace fp8dot
