// The precision -> accumulation rule, checked over every combination of operand types,
// operand precisions and algorithms against an independent statement of DESIGN.md §1.1.
#include "fp8dot/precision.h"
#include "status_matchers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

namespace fp8dot {
namespace {

// DESIGN.md §1.1 written out independently of precision.cc: nullopt means "error".
std::optional<AccumulationMode> Expected(DType lhs, DType rhs, Precision p0, Precision p1,
                                         Algorithm algorithm) {
  const bool all_default = p0 == Precision::kDefault && p1 == Precision::kDefault;
  const bool any_highest = p0 == Precision::kHighest || p1 == Precision::kHighest;
  if (IsFp8(lhs) && IsFp8(rhs)) {
    if (algorithm == Algorithm::kAnyF8AnyF8F32FastAccum) return AccumulationMode::kFp8Fast;
    if (algorithm == Algorithm::kAnyF8AnyF8F32) return AccumulationMode::kFp8Promoted;
    if (algorithm == Algorithm::kUnset) {
      return all_default ? AccumulationMode::kFp8Fast : AccumulationMode::kFp8Promoted;
    }
    return std::nullopt;
  }
  if (IsFp8(lhs) || IsFp8(rhs) || lhs != rhs) return std::nullopt;
  const DType t = lhs;
  switch (algorithm) {
    case Algorithm::kUnset:
      if (t == DType::kF32) return any_highest ? AccumulationMode::kF32 : AccumulationMode::kTf32;
      if (t == DType::kF64) return AccumulationMode::kF64;
      return AccumulationMode::kF32;
    case Algorithm::kAnyF8AnyF8F32:
    case Algorithm::kAnyF8AnyF8F32FastAccum:
      return std::nullopt;
    case Algorithm::kF16F16F16:
      return t == DType::kF16 ? std::optional(AccumulationMode::kF16Accumulate) : std::nullopt;
    case Algorithm::kF16F16F32:
      return t == DType::kF16 ? std::optional(AccumulationMode::kF32) : std::nullopt;
    case Algorithm::kBF16BF16BF16:
      return t == DType::kBF16 ? std::optional(AccumulationMode::kBf16Accumulate) : std::nullopt;
    case Algorithm::kBF16BF16F32:
      if (t == DType::kBF16) return AccumulationMode::kF32;
      return t == DType::kF32 ? std::optional(AccumulationMode::kBf16) : std::nullopt;
    case Algorithm::kBF16BF16F32X3:
      return t == DType::kF32 ? std::optional(AccumulationMode::kBf16x3) : std::nullopt;
    case Algorithm::kBF16BF16F32X6:
      return t == DType::kF32 ? std::optional(AccumulationMode::kBf16x6) : std::nullopt;
    case Algorithm::kBF16BF16F32X9:
      return t == DType::kF32 ? std::optional(AccumulationMode::kBf16x9) : std::nullopt;
    case Algorithm::kTF32TF32F32:
      return t == DType::kF32 ? std::optional(AccumulationMode::kTf32) : std::nullopt;
    case Algorithm::kTF32TF32F32X3:
      return t == DType::kF32 ? std::optional(AccumulationMode::kTf32x3) : std::nullopt;
    case Algorithm::kF32F32F32:
      return t == DType::kF32 ? std::optional(AccumulationMode::kF32) : std::nullopt;
    case Algorithm::kF64F64F64:
      return t == DType::kF64 ? std::optional(AccumulationMode::kF64) : std::nullopt;
  }
  return std::nullopt;
}

TEST(PrecisionTest, EveryTypePrecisionAndAlgorithmCombination) {
  int checked = 0, fast = 0, errors = 0;
  for (DType lhs : kAllDTypes) {
    for (DType rhs : kAllDTypes) {
      for (Precision p0 : kAllPrecisions) {
        for (Precision p1 : kAllPrecisions) {
          for (Algorithm algorithm : kAllAlgorithms) {
            PrecisionConfig config{{p0, p1}, algorithm};
            StatusOr<AccumulationMode> got = ResolveAccumulation(lhs, rhs, config);
            std::optional<AccumulationMode> want = Expected(lhs, rhs, p0, p1, algorithm);
            SCOPED_TRACE(std::string(DTypeName(lhs)) + " x " + DTypeName(rhs) + " {" +
                         PrecisionName(p0) + "," + PrecisionName(p1) + "} " +
                         AlgorithmName(algorithm));
            ASSERT_EQ(got.ok(), want.has_value()) << got.status().ToString();
            if (want) {
              ASSERT_EQ(*got, *want);
              fast += *want == AccumulationMode::kFp8Fast;
            } else {
              ASSERT_EQ(got.status().code(), StatusCode::kInvalidArgument);
              ++errors;
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 6 * 6 * 3 * 3 * 14);
  // 4 FP8 pairs x (1 all-default unset + 9 with the fast algorithm) = 40 fast combinations.
  EXPECT_EQ(fast, 40);
  EXPECT_GT(errors, 0);
}

TEST(PrecisionTest, DiscussionExamples) {
  // The seed discussion: fprop DEFAULT -> fast, gradients HIGHEST -> promoted. XLA's rule makes
  // any non-DEFAULT operand promote, unlike the first proposal ("all HIGHEST -> precise").
  const DType e4m3 = DType::kF8E4M3FN, e5m2 = DType::kF8E5M2;
  using P = Precision;
  FP8_EXPECT_OK_AND_EQ(ResolveAccumulation(e4m3, e4m3, {{P::kDefault, P::kDefault}}),
                       AccumulationMode::kFp8Fast);
  FP8_EXPECT_OK_AND_EQ(ResolveAccumulation(e4m3, e5m2, {{P::kHighest, P::kHighest}}),
                       AccumulationMode::kFp8Promoted);
  FP8_EXPECT_OK_AND_EQ(ResolveAccumulation(e4m3, e4m3, {{P::kDefault, P::kHighest}}),
                       AccumulationMode::kFp8Promoted);
  FP8_EXPECT_OK_AND_EQ(ResolveAccumulation(e4m3, e4m3, {{P::kHigh, P::kDefault}}),
                       AccumulationMode::kFp8Promoted);
  // The accumulation does not depend on which FP8 types are used (the rejected first proposal).
  FP8_EXPECT_OK_AND_EQ(ResolveAccumulation(e5m2, e4m3, {{P::kDefault, P::kDefault}}),
                       AccumulationMode::kFp8Fast);
  FP8_EXPECT_OK_AND_EQ(
      ResolveAccumulation(e4m3, e4m3,
                          {{P::kHighest, P::kHighest}, Algorithm::kAnyF8AnyF8F32FastAccum}),
      AccumulationMode::kFp8Fast);
  FP8_EXPECT_OK_AND_EQ(ResolveAccumulation(DType::kF32, DType::kF32, {{P::kHigh, P::kHigh}}),
                       AccumulationMode::kTf32);
}

TEST(PrecisionTest, ErrorsNameTheProblem) {
  EXPECT_EQ(ResolveAccumulation(DType::kF8E4M3FN, DType::kBF16, {}).status().message(),
            "unsupported operand type pair f8e4m3fn x bf16: an FP8 operand needs an FP8 partner "
            "(convert the other operand, or dequantise both)");
  EXPECT_EQ(
      ResolveAccumulation(DType::kBF16, DType::kBF16,
                          {{Precision::kDefault, Precision::kDefault}, Algorithm::kAnyF8AnyF8F32})
          .status()
          .message(),
      "algorithm ALG_DOT_ANY_F8_ANY_F8_F32 does not apply to operand types bf16 x bf16");
  EXPECT_EQ(
      ResolveAccumulation(DType::kF32, DType::kF32, {{Precision::kDefault}}).status().message(),
      "operand_precision must have 2 entries (lhs, rhs), got 1");
}

TEST(PrecisionTest, ParsesNamesCaseInsensitively) {
  FP8_EXPECT_OK_AND_EQ(ParsePrecision("highest"), Precision::kHighest);
  FP8_EXPECT_OK_AND_EQ(ParsePrecision("DEFAULT"), Precision::kDefault);
  FP8_EXPECT_OK_AND_EQ(ParseAlgorithm("any_f8_any_f8_f32_fast_accum"),
                       Algorithm::kAnyF8AnyF8F32FastAccum);
  FP8_EXPECT_OK_AND_EQ(ParseAlgorithm("ALG_DOT_TF32_TF32_F32_X3"), Algorithm::kTF32TF32F32X3);
  FP8_EXPECT_OK_AND_EQ(ParseAlgorithm("unset"), Algorithm::kUnset);
  for (Algorithm a : kAllAlgorithms) FP8_EXPECT_OK_AND_EQ(ParseAlgorithm(AlgorithmName(a)), a);
  EXPECT_FALSE(ParsePrecision("medium").ok());
  EXPECT_FALSE(ParseAlgorithm("fast").ok());
}

}  // namespace
}  // namespace fp8dot
