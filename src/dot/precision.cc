#include "fp8dot/precision.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace fp8dot {
namespace {

Status AlgorithmDoesNotApply(Algorithm algorithm, DType lhs, DType rhs) {
  return InvalidArgument("algorithm %s does not apply to operand types %s x %s",
                         AlgorithmName(algorithm), DTypeName(lhs), DTypeName(rhs));
}

// Accumulation for a non-FP8 pair of equal types under an explicit algorithm.
StatusOr<AccumulationMode> ResolveExplicitAlgorithm(DType type, Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kF16F16F16:
      if (type == DType::kF16) return AccumulationMode::kF16Accumulate;
      break;
    case Algorithm::kF16F16F32:
      if (type == DType::kF16) return AccumulationMode::kF32;
      break;
    case Algorithm::kBF16BF16BF16:
      if (type == DType::kBF16) return AccumulationMode::kBf16Accumulate;
      break;
    case Algorithm::kBF16BF16F32:
      if (type == DType::kBF16) return AccumulationMode::kF32;
      if (type == DType::kF32) return AccumulationMode::kBf16;
      break;
    case Algorithm::kBF16BF16F32X3:
      if (type == DType::kF32) return AccumulationMode::kBf16x3;
      break;
    case Algorithm::kBF16BF16F32X6:
      if (type == DType::kF32) return AccumulationMode::kBf16x6;
      break;
    case Algorithm::kBF16BF16F32X9:
      if (type == DType::kF32) return AccumulationMode::kBf16x9;
      break;
    case Algorithm::kTF32TF32F32:
      if (type == DType::kF32) return AccumulationMode::kTf32;
      break;
    case Algorithm::kTF32TF32F32X3:
      if (type == DType::kF32) return AccumulationMode::kTf32x3;
      break;
    case Algorithm::kF32F32F32:
      if (type == DType::kF32) return AccumulationMode::kF32;
      break;
    case Algorithm::kF64F64F64:
      if (type == DType::kF64) return AccumulationMode::kF64;
      break;
    case Algorithm::kUnset:
    case Algorithm::kAnyF8AnyF8F32:
    case Algorithm::kAnyF8AnyF8F32FastAccum:
      break;
  }
  return AlgorithmDoesNotApply(algorithm, type, type);
}

}  // namespace

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kDefault:
      return "DEFAULT";
    case Precision::kHigh:
      return "HIGH";
    case Precision::kHighest:
      return "HIGHEST";
  }
  return "?";
}

const char* AlgorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kUnset:
      return "ALG_UNSET";
    case Algorithm::kAnyF8AnyF8F32:
      return "ALG_DOT_ANY_F8_ANY_F8_F32";
    case Algorithm::kAnyF8AnyF8F32FastAccum:
      return "ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM";
    case Algorithm::kF16F16F16:
      return "ALG_DOT_F16_F16_F16";
    case Algorithm::kF16F16F32:
      return "ALG_DOT_F16_F16_F32";
    case Algorithm::kBF16BF16BF16:
      return "ALG_DOT_BF16_BF16_BF16";
    case Algorithm::kBF16BF16F32:
      return "ALG_DOT_BF16_BF16_F32";
    case Algorithm::kBF16BF16F32X3:
      return "ALG_DOT_BF16_BF16_F32_X3";
    case Algorithm::kBF16BF16F32X6:
      return "ALG_DOT_BF16_BF16_F32_X6";
    case Algorithm::kBF16BF16F32X9:
      return "ALG_DOT_BF16_BF16_F32_X9";
    case Algorithm::kTF32TF32F32:
      return "ALG_DOT_TF32_TF32_F32";
    case Algorithm::kTF32TF32F32X3:
      return "ALG_DOT_TF32_TF32_F32_X3";
    case Algorithm::kF32F32F32:
      return "ALG_DOT_F32_F32_F32";
    case Algorithm::kF64F64F64:
      return "ALG_DOT_F64_F64_F64";
  }
  return "?";
}

const char* AccumulationModeName(AccumulationMode mode) {
  switch (mode) {
    case AccumulationMode::kFp8Fast:
      return "fp8-fast";
    case AccumulationMode::kFp8Promoted:
      return "fp8-promoted";
    case AccumulationMode::kF32:
      return "f32";
    case AccumulationMode::kTf32:
      return "tf32";
    case AccumulationMode::kTf32x3:
      return "tf32x3";
    case AccumulationMode::kBf16:
      return "bf16-inputs";
    case AccumulationMode::kBf16x3:
      return "bf16x3";
    case AccumulationMode::kBf16x6:
      return "bf16x6";
    case AccumulationMode::kBf16x9:
      return "bf16x9";
    case AccumulationMode::kF16:
      return "f16-inputs";
    case AccumulationMode::kF16Accumulate:
      return "f16-accumulate";
    case AccumulationMode::kBf16Accumulate:
      return "bf16-accumulate";
    case AccumulationMode::kF64:
      return "f64";
  }
  return "?";
}

StatusOr<Precision> ParsePrecision(std::string_view text) {
  std::string lower = AsciiLowercase(text);
  for (Precision precision : kAllPrecisions) {
    if (lower == AsciiLowercase(PrecisionName(precision))) return precision;
  }
  return InvalidArgument("unknown precision '%.*s' (expected default, high or highest)",
                         static_cast<int>(text.size()), text.data());
}

StatusOr<Algorithm> ParseAlgorithm(std::string_view text) {
  std::string lower = AsciiLowercase(text);
  for (Algorithm algorithm : kAllAlgorithms) {
    std::string name = AsciiLowercase(AlgorithmName(algorithm));
    std::string short_name = name.rfind("alg_dot_", 0) == 0 ? name.substr(8) : name.substr(4);
    if (lower == name || lower == short_name || (algorithm == Algorithm::kUnset && lower == "")) {
      return algorithm;
    }
  }
  return InvalidArgument(
      "unknown algorithm '%.*s' (expected e.g. any_f8_any_f8_f32, any_f8_any_f8_f32_fast_accum, "
      "tf32_tf32_f32, f32_f32_f32, unset)",
      static_cast<int>(text.size()), text.data());
}

bool IsFp8Accumulation(AccumulationMode mode) {
  return mode == AccumulationMode::kFp8Fast || mode == AccumulationMode::kFp8Promoted;
}

StatusOr<AccumulationMode> ResolveAccumulation(DType lhs, DType rhs,
                                               const PrecisionConfig& config) {
  if (config.operand_precision.size() != 2) {
    return InvalidArgument("operand_precision must have 2 entries (lhs, rhs), got %zu",
                           config.operand_precision.size());
  }
  const Precision max_precision =
      std::max(config.operand_precision[0], config.operand_precision[1]);

  if (IsFp8(lhs) || IsFp8(rhs)) {
    if (!IsFp8(lhs) || !IsFp8(rhs)) {
      return InvalidArgument(
          "unsupported operand type pair %s x %s: an FP8 operand needs an FP8 partner "
          "(convert the other operand, or dequantise both)",
          DTypeName(lhs), DTypeName(rhs));
    }
    switch (config.algorithm) {
      case Algorithm::kAnyF8AnyF8F32FastAccum:
        return AccumulationMode::kFp8Fast;
      case Algorithm::kAnyF8AnyF8F32:
        return AccumulationMode::kFp8Promoted;
      case Algorithm::kUnset:
        return max_precision == Precision::kDefault ? AccumulationMode::kFp8Fast
                                                    : AccumulationMode::kFp8Promoted;
      default:
        return AlgorithmDoesNotApply(config.algorithm, lhs, rhs);
    }
  }

  if (lhs != rhs) {
    return InvalidArgument(
        "unsupported operand type pair %s x %s: non-FP8 operands must have the same type",
        DTypeName(lhs), DTypeName(rhs));
  }
  if (config.algorithm != Algorithm::kUnset) return ResolveExplicitAlgorithm(lhs, config.algorithm);
  switch (lhs) {
    case DType::kF32:
      return max_precision == Precision::kHighest ? AccumulationMode::kF32
                                                  : AccumulationMode::kTf32;
    case DType::kF64:
      return AccumulationMode::kF64;
    default:
      return AccumulationMode::kF32;  // bf16, f16: exact products, FP32 sums
  }
}

}  // namespace fp8dot
