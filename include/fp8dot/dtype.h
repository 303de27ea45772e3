// Element types fp8dot understands, with the names HLO uses for them (f8e4m3fn, bf16, ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fp8dot/status.h"

namespace fp8dot {

enum class DType {
  kF8E4M3FN,  // OCP FP8 E4M3, "fn": finite only, max 448, NaN = S.1111.111
  kF8E5M2,    // OCP FP8 E5M2, IEEE-like: max 57344, has inf
  kBF16,
  kF16,
  kF32,
  kF64,
};

inline constexpr DType kAllDTypes[] = {DType::kF8E4M3FN, DType::kF8E5M2, DType::kBF16,
                                       DType::kF16,      DType::kF32,    DType::kF64};

// HLO spelling: "f8e4m3fn", "f8e5m2", "bf16", "f16", "f32", "f64".
const char* DTypeName(DType type);
// Accepts the HLO spelling and the ml_dtypes/numpy spelling ("float8_e4m3fn", "bfloat16",
// "float32").
StatusOr<DType> ParseDType(std::string_view name);

int DTypeSizeInBytes(DType type);
bool IsFp8(DType type);
// Largest finite value of the type.
double DTypeMaxFinite(DType type);
// Number of explicitly stored mantissa bits (3 for e4m3fn, 52 for f64).
int DTypeMantissaBits(DType type);
// Exponent of the smallest normal value (-6 for e4m3fn, -14 for e5m2); subnormals share it.
int DTypeMinNormalExponent(DType type);

}  // namespace fp8dot
