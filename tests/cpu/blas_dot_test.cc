#include <gtest/gtest.h>

#include "cpu/cpu_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::Gamma;
using testing::WithinSummationBound;

// f32 accumulation of exact products (FP8 x FP8 products, scaled, are exact in f32 up to one
// rounding of the scale multiply): |error| <= gamma_{K+2}(2^-24) * sum |a b| per element.
TEST(BlasDotTest, MatchesReferenceWithinF32SummationBound) {
  struct Case {
    int64_t batch, m, n, k;
    DType lhs, rhs, out;
    ScaleMode lhs_scale, rhs_scale;
  };
  const Case cases[] = {
      {0, 64, 48, 512, DType::kF8E4M3FN, DType::kF8E4M3FN, DType::kF32, ScaleMode::kNone,
       ScaleMode::kNone},
      {3, 33, 17, 100, DType::kF8E4M3FN, DType::kF8E5M2, DType::kF32, ScaleMode::kTensor,
       ScaleMode::kTensor},
      {0, 128, 256, 256, DType::kF8E5M2, DType::kF8E4M3FN, DType::kF32, ScaleMode::kOuterVector,
       ScaleMode::kOuterVector},
      {0, 128, 256, 384, DType::kF8E4M3FN, DType::kF8E4M3FN, DType::kF32, ScaleMode::kBlock1x128,
       ScaleMode::kBlock128x128},
      {2, 256, 128, 256, DType::kF8E4M3FN, DType::kF8E4M3FN, DType::kF32, ScaleMode::kBlock128x128,
       ScaleMode::kBlock1x128},
      {0, 40, 40, 300, DType::kBF16, DType::kBF16, DType::kF32, ScaleMode::kNone, ScaleMode::kNone},
      // Partial blocks: K, N and M end inside their last 128-block.
      {0, 70, 200, 320, DType::kF8E4M3FN, DType::kF8E4M3FN, DType::kF32, ScaleMode::kBlock1x128,
       ScaleMode::kBlock128x128},
      {0, 130, 96, 200, DType::kF8E4M3FN, DType::kF8E4M3FN, DType::kF32, ScaleMode::kBlock128x128,
       ScaleMode::kBlock1x128},
  };
  for (const Case& c : cases) {
    DotProblemOptions options;
    options.batch = c.batch;
    options.m = c.m;
    options.n = c.n;
    options.k = c.k;
    options.lhs_type = c.lhs;
    options.rhs_type = c.rhs;
    options.output_type = c.out;
    options.lhs_scale_mode = c.lhs_scale;
    options.rhs_scale_mode = c.rhs_scale;
    options.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
    options.seed = static_cast<uint64_t>(c.m * 7 + c.k);
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
    FP8_ASSERT_OK_AND_ASSIGN(DotResult result, BlasDot(p.spec, p.arguments()));
    EXPECT_TRUE(WithinSummationBound(p, result.output, Gamma(c.k + 2, 0x1.0p-24)))
        << "M=" << c.m << " N=" << c.n << " K=" << c.k << " scales " << ScaleModeName(c.lhs_scale);
  }
}

TEST(BlasDotTest, F64OperandsUseDoublePrecision) {
  DotProblemOptions options;
  options.lhs_type = options.rhs_type = options.output_type = DType::kF64;
  options.k = 1000;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
  FP8_ASSERT_OK_AND_ASSIGN(DotResult result, BlasDot(p.spec, p.arguments()));
  EXPECT_TRUE(WithinSummationBound(p, result.output, Gamma(1000, 0x1.0p-53)));
}

TEST(BlasDotTest, OutputConversionEpilogueAndAmaxMatchTheReferenceFormula) {
  DotProblemOptions options;
  options.m = 32;
  options.n = 64;
  options.k = 128;
  options.output_type = DType::kBF16;
  options.epilogue = Epilogue::kBiasRelu;
  options.beta = -1.0;
  options.compute_amax = true;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
  FP8_ASSERT_OK_AND_ASSIGN(DotResult blas, BlasDot(p.spec, p.arguments()));
  FP8_ASSERT_OK_AND_ASSIGN(DotResult reference, ReferenceDot(p.spec, p.arguments()));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
  int differences = 0;
  for (int64_t i = 0; i < exact.element_count(); ++i) {
    // f32 accumulation can move D across a bf16 rounding boundary, by one bf16 ulp at most.
    const double ulp = std::ldexp(1.0, std::ilogb(std::fabs(exact.GetPhysical(i)) + 1e-30) - 7);
    ASSERT_LE(std::fabs(blas.output.GetPhysical(i) - reference.output.GetPhysical(i)), ulp);
    differences += blas.output.GetPhysical(i) != reference.output.GetPhysical(i);
    ASSERT_GE(blas.output.GetPhysical(i), 0.0);  // relu
  }
  EXPECT_LT(differences, exact.element_count() / 20);
  ASSERT_TRUE(blas.amax.has_value());
  ASSERT_TRUE(reference.amax.has_value());
  EXPECT_NEAR(*blas.amax, *reference.amax, 1e-5 * *reference.amax);
}

}  // namespace
}  // namespace fp8dot
