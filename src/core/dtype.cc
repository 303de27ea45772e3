#include "fp8dot/dtype.h"

#include <cfloat>

namespace fp8dot {

const char* DTypeName(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return "f8e4m3fn";
    case DType::kF8E5M2:
      return "f8e5m2";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "f16";
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
  }
  return "?";
}

StatusOr<DType> ParseDType(std::string_view name) {
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"f8e4m3fn", DType::kF8E4M3FN},
      {"float8_e4m3fn", DType::kF8E4M3FN},
      {"e4m3", DType::kF8E4M3FN},
      {"f8e5m2", DType::kF8E5M2},
      {"float8_e5m2", DType::kF8E5M2},
      {"e5m2", DType::kF8E5M2},
      {"bf16", DType::kBF16},
      {"bfloat16", DType::kBF16},
      {"f16", DType::kF16},
      {"float16", DType::kF16},
      {"f32", DType::kF32},
      {"float32", DType::kF32},
      {"f64", DType::kF64},
      {"float64", DType::kF64},
  };
  for (const Alias& alias : kAliases) {
    if (alias.name == name) return alias.type;
  }
  return InvalidArgument(
      "unknown element type '%.*s' (expected one of f8e4m3fn, f8e5m2, bf16, f16, f32, f64)",
      static_cast<int>(name.size()), name.data());
}

int DTypeSizeInBytes(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
      return 1;
    case DType::kBF16:
    case DType::kF16:
      return 2;
    case DType::kF32:
      return 4;
    case DType::kF64:
      return 8;
  }
  return 0;
}

bool IsFp8(DType type) { return type == DType::kF8E4M3FN || type == DType::kF8E5M2; }

double DTypeMaxFinite(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return 448.0;
    case DType::kF8E5M2:
      return 57344.0;
    case DType::kBF16:
      return 3.3895313892515355e38;
    case DType::kF16:
      return 65504.0;
    case DType::kF32:
      return FLT_MAX;
    case DType::kF64:
      return DBL_MAX;
  }
  return 0;
}

int DTypeMantissaBits(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return 3;
    case DType::kF8E5M2:
      return 2;
    case DType::kBF16:
      return 7;
    case DType::kF16:
      return 10;
    case DType::kF32:
      return 23;
    case DType::kF64:
      return 52;
  }
  return 0;
}

int DTypeMinNormalExponent(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return -6;
    case DType::kF8E5M2:
    case DType::kF16:
      return -14;
    case DType::kBF16:
    case DType::kF32:
      return -126;
    case DType::kF64:
      return -1022;
  }
  return 0;
}

}  // namespace fp8dot
