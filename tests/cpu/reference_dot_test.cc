#include <gtest/gtest.h>

#include <cmath>

#include "cpu/cpu_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

StatusOr<HostTensor> Matrix(DType type, Dims dims, std::vector<double> values,
                            std::vector<int64_t> layout = {}) {
  if (layout.empty()) layout = RowMajorLayout(static_cast<int64_t>(dims.size()));
  FP8_ASSIGN_OR_RETURN(HostTensor t, HostTensor::Create(type, dims, layout));
  // Copy logically so that non-row-major layouts hold the same matrix.
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    t.Set(index, values[i]);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < dims[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return t;
}

TEST(ReferenceDotTest, SmallMatmulByHand) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a, Matrix(DType::kF8E4M3FN, {2, 2}, {1, 2, 3, 4}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b, Matrix(DType::kF8E4M3FN, {2, 2}, {5, 6, 7, 8}));
  DotArguments args{&a, &b};
  DotSpec spec = SpecFromArguments(args, DotSpec());
  FP8_ASSERT_OK_AND_ASSIGN(DotResult result, ReferenceDot(spec, args));
  EXPECT_EQ(result.output.dims(), (Dims{2, 2}));
  EXPECT_EQ(result.output.GetPhysical(0), 19.0);
  EXPECT_EQ(result.output.GetPhysical(1), 22.0);
  EXPECT_EQ(result.output.GetPhysical(2), 43.0);
  EXPECT_EQ(result.output.GetPhysical(3), 50.0);
  EXPECT_EQ(result.accumulation, AccumulationMode::kFp8Fast);
}

TEST(ReferenceDotTest, LayoutDoesNotChangeTheResult) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a, Matrix(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a_column_major,
                           Matrix(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}, {0, 1}));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b,
                           Matrix(DType::kF32, {3, 2}, {1, -1, 2, -2, 3, -3}, {0, 1}));
  for (const HostTensor* lhs : {&a, &a_column_major}) {
    DotArguments args{lhs, &b};
    FP8_ASSERT_OK_AND_ASSIGN(DotResult result,
                             ReferenceDot(SpecFromArguments(args, DotSpec()), args));
    EXPECT_EQ(result.output.GetPhysical(0), 14.0);
    EXPECT_EQ(result.output.GetPhysical(1), -14.0);
    EXPECT_EQ(result.output.GetPhysical(2), 32.0);
    EXPECT_EQ(result.output.GetPhysical(3), -32.0);
  }
}

TEST(ReferenceDotTest, GeneralDotGeneralMatchesNaiveLoops) {
  // lhs [b=2, k1=3, m=4, k2=5], rhs [n=6, k2=5, b=2, k1=3]
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor lhs,
                           RandomTensor(DType::kBF16, {2, 3, 4, 5}, Distribution::kSymmetric, 1));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor rhs,
                           RandomTensor(DType::kBF16, {6, 5, 2, 3}, Distribution::kSymmetric, 2));
  DotSpec spec;
  spec.dimension_numbers = {{0}, {2}, {1, 3}, {3, 1}};
  DotArguments args{&lhs, &rhs};
  spec = SpecFromArguments(args, spec);
  FP8_ASSERT_OK_AND_ASSIGN(DotResult result, ReferenceDot(spec, args));
  ASSERT_EQ(result.output.dims(), (Dims{2, 4, 6}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t n = 0; n < 6; ++n) {
        double sum = 0;
        for (int64_t k1 = 0; k1 < 3; ++k1)
          for (int64_t k2 = 0; k2 < 5; ++k2)
            sum += lhs.Get({b, k1, m, k2}) * rhs.Get({n, k2, b, k1});
        EXPECT_FLOAT_EQ(result.output.Get({b, m, n}), static_cast<float>(sum));
      }
}

// Scales of every mode against a direct evaluation of DESIGN.md's formula.
// Also on partial blocks: M = 130, N = 200, K = 320 end inside their last 128-block.
TEST(ReferenceDotTest, ScaleModesApplyPerElement) {
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape shape : {Shape{128, 256, 384}, Shape{130, 200, 320}})
    for (auto [lhs_mode, rhs_mode] : {std::pair{ScaleMode::kTensor, ScaleMode::kTensor},
                                      {ScaleMode::kOuterVector, ScaleMode::kOuterVector},
                                      {ScaleMode::kBlock1x128, ScaleMode::kBlock1x128},
                                      {ScaleMode::kBlock1x128, ScaleMode::kBlock128x128},
                                      {ScaleMode::kBlock128x128, ScaleMode::kBlock1x128}}) {
      DotProblemOptions options;
      options.m = shape.m;
      options.n = shape.n;
      options.k = shape.k;
      options.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
      options.lhs_scale_mode = lhs_mode;
      options.rhs_scale_mode = rhs_mode;
      FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
      FP8_ASSERT_OK_AND_ASSIGN(HostTensor d, ReferenceDotExact(p.spec, p.arguments()));
      auto lhs_scale = [&](int64_t m, int64_t k) {
        switch (lhs_mode) {
          case ScaleMode::kTensor:
            return p.lhs_scale->GetPhysical(0);
          case ScaleMode::kOuterVector:
            return p.lhs_scale->Get({m});
          case ScaleMode::kBlock1x128:
            return p.lhs_scale->Get({m, k / 128});
          default:
            return p.lhs_scale->Get({m / 128, k / 128});
        }
      };
      auto rhs_scale = [&](int64_t k, int64_t n) {
        switch (rhs_mode) {
          case ScaleMode::kTensor:
            return p.rhs_scale->GetPhysical(0);
          case ScaleMode::kOuterVector:
            return p.rhs_scale->Get({n});
          case ScaleMode::kBlock1x128:
            return p.rhs_scale->Get({k / 128, n});
          default:
            return p.rhs_scale->Get({k / 128, n / 128});
        }
      };
      for (int64_t m : {int64_t{0}, int64_t{77}, shape.m - 1})
        for (int64_t n : {int64_t{0}, int64_t{130}, shape.n - 1}) {
          double sum = 0;
          for (int64_t k = 0; k < shape.k; ++k) {
            sum += lhs_scale(m, k) * p.lhs.Get({m, k}) * rhs_scale(k, n) * p.rhs.Get({k, n});
          }
          EXPECT_NEAR(d.Get({m, n}), sum, 1e-12 * std::fabs(sum) + 1e-12)
              << ScaleModeName(lhs_mode) << " x " << ScaleModeName(rhs_mode) << " M=" << shape.m;
        }
    }
}

TEST(ReferenceDotTest, EpiloguesBiasAlphaBetaAndActivations) {
  DotProblemOptions options;
  options.m = 8;
  options.n = 16;
  options.k = 64;
  options.alpha = 0.5;
  options.beta = 2.0;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem base, MakeDotProblem(options));
  DotSpec plain_spec = base.spec;  // A.B alone
  plain_spec.alpha = 1.0;
  plain_spec.beta = 0.0;
  plain_spec.c.reset();
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor plain, ReferenceDotExact(plain_spec, {&base.lhs, &base.rhs}));
  for (Epilogue epilogue : {Epilogue::kDefault, Epilogue::kBias, Epilogue::kRelu,
                            Epilogue::kBiasRelu, Epilogue::kGelu, Epilogue::kBiasGelu}) {
    options.epilogue = epilogue;
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
    FP8_ASSERT_OK_AND_ASSIGN(HostTensor d, ReferenceDotExact(p.spec, p.arguments()));
    for (int64_t i = 0; i < d.element_count(); ++i) {
      // Same seed: the same A, B and C whatever the epilogue.
      double x = 0.5 * plain.GetPhysical(i) + 2.0 * p.c->GetPhysical(i);
      if (EpilogueHasBias(epilogue)) x += p.bias->GetPhysical(i % 16);
      if (epilogue == Epilogue::kRelu || epilogue == Epilogue::kBiasRelu) x = std::max(x, 0.0);
      if (epilogue == Epilogue::kGelu || epilogue == Epilogue::kBiasGelu) {
        x = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      }
      ASSERT_NEAR(d.GetPhysical(i), x, 1e-12 * (1 + std::fabs(x))) << EpilogueName(epilogue);
    }
  }
}

TEST(ReferenceDotTest, Fp8OutputIsScaledSaturatedAndReportsAmax) {
  DotProblemOptions options;
  options.m = 16;
  options.n = 16;
  options.k = 256;
  options.output_type = DType::kF8E4M3FN;
  options.output_scale = 8.0;  // pushes most |D| * 8 past 448: those must saturate, not NaN
  options.compute_amax = true;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
  FP8_ASSERT_OK_AND_ASSIGN(DotResult result, ReferenceDot(p.spec, p.arguments()));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor exact, ReferenceDotExact(p.spec, p.arguments()));
  double amax = 0;
  int saturated = 0;
  for (int64_t i = 0; i < exact.element_count(); ++i) {
    const double want =
        RoundToDType(exact.GetPhysical(i) * 8.0, DType::kF8E4M3FN, Overflow::kSaturate);
    ASSERT_EQ(result.output.GetPhysical(i), want);
    saturated += std::fabs(want) == 448.0;
    amax = std::max(amax, std::fabs(exact.GetPhysical(i)));
  }
  EXPECT_GT(saturated, 0);
  ASSERT_TRUE(result.amax.has_value());
  EXPECT_EQ(*result.amax, amax);
}

TEST(ReferenceDotTest, InvalidInputIsAnErrorNotACrash) {
  DotProblemOptions options;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(options));
  DotArguments args = p.arguments();
  args.rhs = nullptr;
  EXPECT_EQ(ReferenceDot(p.spec, args).status().message(),
            "rhs is missing (expected f8e4m3fn[256,64]{1,0})");
}

}  // namespace
}  // namespace fp8dot
