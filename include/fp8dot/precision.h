// PrecisionConfig (XLA's name) and the ONE rule that turns it into an accumulation mode.
//
// For FP8 operands XLA reads the PrecisionConfig as an accumulation request: fast accumulation iff
// the algorithm is ANY_F8_ANY_F8_F32_FAST_ACCUM, or the algorithm is unset and every operand
// precision is DEFAULT (XLA computes max(operand precisions) == DEFAULT). Anything else promotes
// the tensor cores' partial sums to FP32. docs/precision.md explains the rule and its history.
#pragma once

#include <string_view>
#include <vector>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot {

enum class Precision { kDefault, kHigh, kHighest };

// XLA's PrecisionConfig::Algorithm values (xla_data.proto), same names without the ALG_DOT_ prefix.
enum class Algorithm {
  kUnset,
  kAnyF8AnyF8F32,
  kAnyF8AnyF8F32FastAccum,
  kF16F16F16,
  kF16F16F32,
  kBF16BF16BF16,
  kBF16BF16F32,
  kBF16BF16F32X3,
  kBF16BF16F32X6,
  kBF16BF16F32X9,
  kTF32TF32F32,
  kTF32TF32F32X3,
  kF32F32F32,
  kF64F64F64,
};

inline constexpr Precision kAllPrecisions[] = {Precision::kDefault, Precision::kHigh,
                                               Precision::kHighest};
inline constexpr Algorithm kAllAlgorithms[] = {
    Algorithm::kUnset,         Algorithm::kAnyF8AnyF8F32, Algorithm::kAnyF8AnyF8F32FastAccum,
    Algorithm::kF16F16F16,     Algorithm::kF16F16F32,     Algorithm::kBF16BF16BF16,
    Algorithm::kBF16BF16F32,   Algorithm::kBF16BF16F32X3, Algorithm::kBF16BF16F32X6,
    Algorithm::kBF16BF16F32X9, Algorithm::kTF32TF32F32,   Algorithm::kTF32TF32F32X3,
    Algorithm::kF32F32F32,     Algorithm::kF64F64F64,
};

struct PrecisionConfig {
  // One per operand: {lhs, rhs}. HLO's operand_precision={default,highest}.
  std::vector<Precision> operand_precision = {Precision::kDefault, Precision::kDefault};
  Algorithm algorithm = Algorithm::kUnset;
};

// How the products are summed. The CPU emulation and the CUDA backend implement each one.
enum class AccumulationMode {
  kFp8Fast,         // FP8 tensor-core accumulator only (~14 mantissa bits on Hopper): fast, lossy
  kFp8Promoted,     // partial sums promoted to FP32 registers every 128 K-elements ("split
                    // accumulator")
  kF32,             // inputs exact, FP32 accumulation (bf16/f16 operands; f32 with HIGHEST)
  kTf32,            // f32 inputs rounded to TF32 (10-bit mantissa), FP32 accumulation
  kTf32x3,          // f32 inputs split into 3 TF32 products, FP32 accumulation (~f32 accurate)
  kBf16,            // inputs rounded to bf16, FP32 accumulation
  kBf16x3,          // bf16 splitting: 3 products
  kBf16x6,          // 6 products
  kBf16x9,          // 9 products (~f32 accurate)
  kF16,             // inputs rounded to f16, FP32 accumulation
  kF16Accumulate,   // f16 inputs and f16 accumulation (ALG_DOT_F16_F16_F16)
  kBf16Accumulate,  // bf16 inputs and bf16 accumulation (ALG_DOT_BF16_BF16_BF16)
  kF64,             // f64 inputs and accumulation
};

const char* PrecisionName(Precision precision);  // "DEFAULT", "HIGH", "HIGHEST"
const char* AlgorithmName(Algorithm algorithm);  // "ALG_DOT_ANY_F8_ANY_F8_F32", ..., "ALG_UNSET"
const char* AccumulationModeName(AccumulationMode mode);  // "fp8-fast", "fp8-promoted", "tf32", ...
// Case-insensitive; "default"/"DEFAULT", "highest"; algorithms with or without the ALG_DOT_ prefix.
StatusOr<Precision> ParsePrecision(std::string_view text);
StatusOr<Algorithm> ParseAlgorithm(std::string_view text);

bool IsFp8Accumulation(AccumulationMode mode);

// THE rule (DESIGN.md §1.1). Every path that needs an accumulation mode calls this and nothing
// else: the CPU backends, the CUDA backend (which sets CUBLASLT_MATMUL_DESC_FAST_ACCUM from it),
// the CLI, the HLO rewriter. Errors: operand_precision without exactly two entries, a type pair
// fp8dot does not support (FP8 with non-FP8, or two different non-FP8 types), or an algorithm that
// does not apply to the operand types (e.g. ANY_F8_ANY_F8_F32 on bf16).
StatusOr<AccumulationMode> ResolveAccumulation(DType lhs, DType rhs, const PrecisionConfig& config);

}  // namespace fp8dot
