#include <gtest/gtest.h>

#include <cmath>

#include "cpu/cpu_test_util.h"
#include "fp8dot/error_metrics.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::Gamma;
using testing::WithinSummationBound;

StatusOr<DotProblem> Problem(int64_t m, int64_t n, int64_t k, Precision precision,
                             Distribution distribution = Distribution::kSymmetric,
                             uint64_t seed = 1) {
  DotProblemOptions options;
  options.m = m;
  options.n = n;
  options.k = k;
  options.precision_config.operand_precision = {precision, precision};
  options.distribution = distribution;
  options.seed = seed;
  return MakeDotProblem(options);
}

// The relative Frobenius error of EmulatedDot (default model) against the exact result.
StatusOr<double> EmulatedError(const DotProblem& p) {
  FP8_ASSIGN_OR_RETURN(DotResult result, EmulatedDot(p.spec, p.arguments()));
  FP8_ASSIGN_OR_RETURN(HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
  FP8_ASSIGN_OR_RETURN(ErrorStats error, CompareToReference(result.output, exact));
  return error.relative_frobenius;
}

// A crafted row that shows swamping: one large product, then many that each fall below the
// fast accumulator's quantum. Every number here follows from the model by hand:
//   a = [256, 2^-6 x 4095], b = [1 x 4096]. Exact: 256 + 4095/64 = 319.984375.
//   fast: quantum at 2^8 is 2^-5 > 2^-6, so every small product is cut: 256.
//   promoted: block 0 gives 256 (127 small ones lost), each of the other 31 blocks sums
//   128 * 2^-6 = 2 exactly: 256 + 62 = 318.
TEST(EmulatedDotTest, CraftedSwampingMatchesTheModelByHand) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a, HostTensor::Create(DType::kF8E4M3FN, {1, 4096}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b, HostTensor::Create(DType::kF8E4M3FN, {4096, 1}));
  for (int64_t k = 0; k < 4096; ++k) {
    a.SetPhysical(k, k == 0 ? 256.0 : std::ldexp(1.0, -6));
    b.SetPhysical(k, 1.0);
  }
  DotArguments args{&a, &b};
  DotSpec spec = SpecFromArguments(args, DotSpec());
  FP8_ASSERT_OK_AND_ASSIGN(DotResult fast, EmulatedDot(spec, args));
  EXPECT_EQ(fast.output.GetPhysical(0), 256.0);
  spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  FP8_ASSERT_OK_AND_ASSIGN(DotResult promoted, EmulatedDot(spec, args));
  EXPECT_EQ(promoted.output.GetPhysical(0), 318.0);
  FP8_ASSERT_OK_AND_ASSIGN(DotResult reference, ReferenceDot(spec, args));
  EXPECT_EQ(reference.output.GetPhysical(0), 319.984375);
}

// e5m2 has infinities and NaNs: a row that holds one gives inf or NaN as the hardware does
// (inf x finite = inf, inf x 0 = NaN, inf - inf = NaN), in both modes, and leaves the other rows'
// finite sums alone.
TEST(EmulatedDotTest, InfinitiesAndNansInOperandsPropagateRowByRow) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a, HostTensor::Create(DType::kF8E5M2, {4, 256}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b, HostTensor::Create(DType::kF8E5M2, {256, 1}));
  for (int64_t k = 0; k < 256; ++k) {
    b.SetPhysical(k, k == 7 ? 0.0 : 2.0);
    for (int64_t m = 0; m < 4; ++m) a.SetPhysical(m * 256 + k, 1.0);
  }
  a.SetPhysical(0 * 256 + 3, INFINITY);  // row 0: + inf x 2
  a.SetPhysical(1 * 256 + 7, INFINITY);  // row 1: inf x 0 = NaN
  a.SetPhysical(2 * 256 + 3, INFINITY);  // row 2: inf x 2 and -inf x 2
  a.SetPhysical(2 * 256 + 200, -INFINITY);
  DotArguments args{&a, &b};
  DotSpec spec = SpecFromArguments(args, DotSpec());
  for (Precision precision : {Precision::kDefault, Precision::kHighest}) {
    spec.precision_config.operand_precision = {precision, precision};
    FP8_ASSERT_OK_AND_ASSIGN(DotResult result, EmulatedDot(spec, args));
    EXPECT_EQ(result.output.GetPhysical(0), INFINITY);
    EXPECT_TRUE(std::isnan(result.output.GetPhysical(1)));
    EXPECT_TRUE(std::isnan(result.output.GetPhysical(2)));
    EXPECT_EQ(result.output.GetPhysical(3), 2.0 * 255);  // 255 products of 2, one of 0
  }
}

TEST(EmulatedDotTest, WideAccumulatorReproducesTheReference) {
  Fp8AccumulatorModel wide;
  wide.mantissa_bits = 50;
  for (Precision precision : {Precision::kDefault, Precision::kHighest}) {
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p,
                             Problem(16, 16, 2048, precision, Distribution::kPositive));
    FP8_ASSERT_OK_AND_ASSIGN(DotResult result, EmulatedDot(p.spec, p.arguments(), wide));
    // The only rounding left is the f32 output (and, promoted, 16 f32 additions).
    EXPECT_TRUE(WithinSummationBound(p, result.output, Gamma(18, 0x1.0p-24)));
  }
}

// The defaults were calibrated against the H200 measurements in FACTS.md (cuBLASLt, e4m3,
// f32 output, M=N=512); docs/accumulation-model.md. With 32x32 outputs the sample estimate of a
// relative Frobenius error moves by a few percent, so 25% is a regression guard, not a fit.
TEST(EmulatedDotTest, DefaultModelReproducesTheH200AccuracyTable) {
  struct Row {
    int64_t k;
    Distribution distribution;
    double fast, promoted;  // FACTS.md
  };
  const Row rows[] = {{256, Distribution::kSymmetric, 1.8e-4, 1.1e-4},
                      {1024, Distribution::kSymmetric, 4.7e-4, 1.1e-4},
                      {1024, Distribution::kPositive, 1.3e-2, 5.0e-4},
                      {4096, Distribution::kPositive, 6.6e-2, 5.0e-4}};
  for (const Row& row : rows) {
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem fast,
                             Problem(32, 32, row.k, Precision::kDefault, row.distribution, 3));
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem promoted,
                             Problem(32, 32, row.k, Precision::kHighest, row.distribution, 3));
    FP8_ASSERT_OK_AND_ASSIGN(const double fast_error, EmulatedError(fast));
    FP8_ASSERT_OK_AND_ASSIGN(const double promoted_error, EmulatedError(promoted));
    EXPECT_NEAR(fast_error / row.fast, 1.0, 0.25) << "K=" << row.k << " fast " << fast_error;
    EXPECT_NEAR(promoted_error / row.promoted, 1.0, 0.25)
        << "K=" << row.k << " promoted " << promoted_error;
  }
}

TEST(EmulatedDotTest, FastErrorGrowsWithKAndIsBiasedOnSameSignData) {
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem fast,
                           Problem(16, 16, 4096, Precision::kDefault, Distribution::kPositive));
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem promoted,
                           Problem(16, 16, 4096, Precision::kHighest, Distribution::kPositive));
  FP8_ASSERT_OK_AND_ASSIGN(const double fast_error, EmulatedError(fast));
  FP8_ASSERT_OK_AND_ASSIGN(const double promoted_error, EmulatedError(promoted));
  EXPECT_GE(fast_error, 10 * promoted_error);
  // Truncation only loses magnitude: every fast result is below the exact one.
  FP8_ASSERT_OK_AND_ASSIGN(DotResult result, EmulatedDot(fast.spec, fast.arguments()));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor exact, ReferenceDotExact(fast.spec, fast.arguments()));
  for (int64_t i = 0; i < exact.element_count(); ++i) {
    ASSERT_LT(result.output.GetPhysical(i), exact.GetPhysical(i));
  }
}

TEST(EmulatedDotTest, BlockScalesArePromotedPerBlock) {
  DotProblemOptions options;
  options.m = 128;
  options.n = 128;
  options.k = 512;
  options.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  options.lhs_scale_mode = ScaleMode::kBlock1x128;
  options.rhs_scale_mode = ScaleMode::kBlock128x128;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
  FP8_ASSERT_OK_AND_ASSIGN(const double error, EmulatedError(p));
  // Within-block accumulator error (~1e-4 on symmetric data, FACTS.md) and nothing worse:
  // a scale applied to the wrong block would give errors of order 1.
  EXPECT_LT(error, 3e-4);
  EXPECT_GT(error, 0.0);
}

// A partial last block (K = 320: blocks of 128, 128 and 64; N = 200: 128 and 72 columns under
// their B scales) is promoted at K's end with its own scale.
TEST(EmulatedDotTest, PartialBlocksArePromotedWithTheirOwnScales) {
  DotProblemOptions options;
  options.m = 70;
  options.n = 200;
  options.k = 320;
  options.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  options.lhs_scale_mode = ScaleMode::kBlock1x128;
  options.rhs_scale_mode = ScaleMode::kBlock128x128;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
  ASSERT_EQ(p.lhs_scale->dims(), (Dims{70, 3}));
  ASSERT_EQ(p.rhs_scale->dims(), (Dims{3, 2}));
  FP8_ASSERT_OK_AND_ASSIGN(const double error, EmulatedError(p));
  EXPECT_LT(error, 3e-4);  // as for whole blocks; a misplaced scale would give errors of order 1
  EXPECT_GT(error, 0.0);
}

// A promotion is r + f32(p * s) (cuBLASLt) or fma(p, s, r) (the own kernel):
// Fp8AccumulatorModel::fused_promotion. Worked by hand: block 0 holds one product 1 * 1 with
// scale_a = f32(0.3), block 1 one product 1.125 * 1 with scale_a = f32(1.3), B's scales are 1.
// After block 0 both give r = f32(0.3); then f32(1.125 * f32(1.3)) rounds before the add and
// the sum lands on 1.7625000476837158, while the single rounding of the FMA gives
// 1.7624999284744263 (one f32 ulp lower).
TEST(EmulatedDotTest, FusedPromotionRoundsOnceWhereMultiplyThenAddRoundsTwice) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a, HostTensor::Create(DType::kF8E4M3FN, {1, 256}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b, HostTensor::Create(DType::kF8E4M3FN, {256, 128}));
  a.SetPhysical(0, 1.0);
  a.SetPhysical(128, 1.125);
  b.Set({0, 0}, 1.0);
  b.Set({128, 0}, 1.0);
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor lhs_scale, HostTensor::Create(DType::kF32, {1, 2}));
  lhs_scale.SetPhysical(0, 0.3);
  lhs_scale.SetPhysical(1, 1.3);
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor rhs_scale, HostTensor::Create(DType::kF32, {2, 1}));
  rhs_scale.SetPhysical(0, 1.0);
  rhs_scale.SetPhysical(1, 1.0);
  DotArguments args{&a, &b, &lhs_scale, &rhs_scale};
  DotSpec spec = SpecFromArguments(args, DotSpec());
  spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  spec.lhs_scale = {ScaleMode::kBlock1x128, {1, 2}, {}};
  spec.rhs_scale = {ScaleMode::kBlock128x128, {2, 1}, {}};
  Fp8AccumulatorModel model;
  FP8_ASSERT_OK_AND_ASSIGN(DotResult multiply_then_add, EmulatedDot(spec, args, model));
  EXPECT_EQ(multiply_then_add.output.GetPhysical(0), 1.7625000476837158);
  model.fused_promotion = true;
  FP8_ASSERT_OK_AND_ASSIGN(DotResult fused, EmulatedDot(spec, args, model));
  EXPECT_EQ(fused.output.GetPhysical(0), 1.7624999284744263);
  EXPECT_EQ(fused.output.GetPhysical(1), 0.0);  // the other columns are zero either way
}

// The epilogue runs in f32 as on the GPU, so D and amax are f32 values and D reaches an f16
// output through f32. S = 128 + 2^-4 (exact, promoted), bias = 2^-20: f32 has no room for 2^-20
// at 128 (its ulp there is 2^-16), so the GPU holds 128.0625, an f16 tie (f16's ulp at 128 is
// 2^-3) that rounds to even, 128; the exact reference rounds 128.0625 + 2^-20 up to 128.125.
TEST(EmulatedDotTest, TheEpilogueComputesInF32AsTheGpuDoes) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a, HostTensor::Create(DType::kF8E4M3FN, {1, 16}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b, HostTensor::Create(DType::kF8E4M3FN, {16, 1}));
  a.SetPhysical(0, 128.0);
  a.SetPhysical(1, 0.0625);
  b.SetPhysical(0, 1.0);
  b.SetPhysical(1, 1.0);
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor bias, HostTensor::Create(DType::kF32, {1}));
  const double tiny = std::ldexp(1.0, -20);
  bias.SetPhysical(0, tiny);
  DotArguments args{&a, &b};
  args.bias = &bias;
  DotSpec spec = SpecFromArguments(args, DotSpec());
  spec.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  spec.epilogue = Epilogue::kBias;
  spec.compute_amax = true;
  struct Case {
    DType out;
    double emulated, reference;
  };
  for (const Case& c : {Case{DType::kF16, 128.0, 128.125}, Case{DType::kF32, 128.0625, 128.0625}}) {
    spec.output_type = c.out;
    FP8_ASSERT_OK_AND_ASSIGN(DotResult emulated, EmulatedDot(spec, args));
    FP8_ASSERT_OK_AND_ASSIGN(DotResult reference, ReferenceDot(spec, args));
    EXPECT_EQ(emulated.output.GetPhysical(0), c.emulated) << DTypeName(c.out);
    EXPECT_EQ(reference.output.GetPhysical(0), c.reference) << DTypeName(c.out);
    ASSERT_TRUE(emulated.amax.has_value() && reference.amax.has_value());
    EXPECT_EQ(*emulated.amax, 128.0625);
    EXPECT_EQ(*reference.amax, 128.0625 + tiny);
  }
}

TEST(EmulatedDotTest, NonFp8ModesRoundInputsAsTheirTypes) {
  auto error_for = [](Algorithm algorithm, Precision precision) -> StatusOr<double> {
    DotProblemOptions options;
    options.lhs_type = options.rhs_type = DType::kF32;
    options.m = options.n = 16;
    options.k = 512;
    options.distribution = Distribution::kMixedMagnitude;
    options.precision_config = {{precision, precision}, algorithm};
    FP8_ASSIGN_OR_RETURN(DotProblem p, MakeDotProblem(options));
    return EmulatedError(p);
  };
  FP8_ASSERT_OK_AND_ASSIGN(const double tf32, error_for(Algorithm::kUnset, Precision::kDefault));
  FP8_ASSERT_OK_AND_ASSIGN(const double f32, error_for(Algorithm::kUnset, Precision::kHighest));
  FP8_ASSERT_OK_AND_ASSIGN(const double bf16,
                           error_for(Algorithm::kBF16BF16F32, Precision::kDefault));
  FP8_ASSERT_OK_AND_ASSIGN(const double bf16x3,
                           error_for(Algorithm::kBF16BF16F32X3, Precision::kDefault));
  FP8_ASSERT_OK_AND_ASSIGN(const double bf16x6,
                           error_for(Algorithm::kBF16BF16F32X6, Precision::kDefault));
  FP8_ASSERT_OK_AND_ASSIGN(const double bf16x9,
                           error_for(Algorithm::kBF16BF16F32X9, Precision::kDefault));
  FP8_ASSERT_OK_AND_ASSIGN(const double tf32x3,
                           error_for(Algorithm::kTF32TF32F32X3, Precision::kDefault));
  // Relative error per product: bf16 inputs 2^-8, tf32 2^-11, bf16x3 drops the 2^-16 terms,
  // tf32x3 the 2^-22 terms; bf16x6 drops only 2^-24 terms, so like bf16x9 it is left with f32
  // summation error, over 6 (9) f32 additions per K-element instead of 1.
  EXPECT_GT(bf16, 4 * tf32);
  EXPECT_GT(tf32, 100 * f32);
  EXPECT_LT(bf16x3, tf32 / 16);
  EXPECT_LT(bf16x6, bf16x3 / 4);
  EXPECT_LE(bf16x6, 9 * f32);
  EXPECT_LT(tf32x3, tf32 / 256);
  EXPECT_LE(bf16x9, 9 * f32);
  EXPECT_LT(f32, 1e-6);
}

TEST(EmulatedDotTest, RejectsAnInvalidModel) {
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, Problem(4, 4, 32, Precision::kDefault));
  Fp8AccumulatorModel model;
  model.promotion_interval = 100;
  EXPECT_EQ(EmulatedDot(p.spec, p.arguments(), model).status().message(),
            "promotion_interval must be a positive multiple of group_size (32), got 100");
}

}  // namespace
}  // namespace fp8dot
