// The accumulation the PrecisionConfig resolves to is the one cuBLASLt runs: FAST_ACCUM read
// back from the descriptor, the physics of fast vs promoted accumulation, and the f32 / bf16 /
// f16 dots (TF32 vs FP32).
#include "cuda/cuda_test_util.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::ExpectMatchesReference;

StatusOr<CudaPlanInfo> PlanInfo(Precision lhs, Precision rhs, Algorithm algorithm,
                                DType lhs_type = DType::kF8E4M3FN,
                                DType rhs_type = DType::kF8E4M3FN) {
  DotProblemOptions o;
  o.lhs_type = lhs_type;
  o.rhs_type = rhs_type;
  o.precision_config.operand_precision = {lhs, rhs};
  o.precision_config.algorithm = algorithm;
  FP8_ASSIGN_OR_RETURN(DotProblem p, MakeDotProblem(o));
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(p.spec));
  return plan->info();
}

TEST(CudaDotPrecisionTest, FastAccumReadBackFromTheDescriptor) {
  FP8_SKIP_WITHOUT_GPU();
  struct Case {
    Precision lhs, rhs;
    Algorithm algorithm;
    int expected;
  };
  const Case cases[] = {
      {Precision::kDefault, Precision::kDefault, Algorithm::kUnset, 1},
      {Precision::kDefault, Precision::kHighest, Algorithm::kUnset, 0},
      {Precision::kHighest, Precision::kDefault, Algorithm::kUnset, 0},
      {Precision::kHigh, Precision::kDefault, Algorithm::kUnset, 0},
      {Precision::kHighest, Precision::kHighest, Algorithm::kUnset, 0},
      {Precision::kHighest, Precision::kHighest, Algorithm::kAnyF8AnyF8F32FastAccum, 1},
      {Precision::kDefault, Precision::kDefault, Algorithm::kAnyF8AnyF8F32, 0},
  };
  for (const Case& c : cases) {
    for (auto [lhs_type, rhs_type] : {std::pair{DType::kF8E4M3FN, DType::kF8E4M3FN},
                                      std::pair{DType::kF8E4M3FN, DType::kF8E5M2}}) {
      StatusOr<CudaPlanInfo> info = PlanInfo(c.lhs, c.rhs, c.algorithm, lhs_type, rhs_type);
      FP8_ASSERT_OK(info.status());
      EXPECT_TRUE(info->native_fp8);
      EXPECT_EQ(info->fast_accum, c.expected)
          << PrecisionName(c.lhs) << "/" << PrecisionName(c.rhs) << " "
          << AlgorithmName(c.algorithm) << " " << DTypeName(rhs_type);
    }
  }
  // The e5m2 x e5m2 upcast is not an FP8 GEMM: no FAST_ACCUM at all, and the plan says so.
  StatusOr<CudaPlanInfo> upcast = PlanInfo(Precision::kDefault, Precision::kDefault,
                                           Algorithm::kUnset, DType::kF8E5M2, DType::kF8E5M2);
  FP8_ASSERT_OK(upcast.status());
  EXPECT_FALSE(upcast->native_fp8);
  EXPECT_EQ(upcast->fast_accum, -1);
}

TEST(CudaDotPrecisionTest, ExplainShowsTheFlagAndTheUpcast) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem fast_problem, MakeDotProblem(o));
  StatusOr<std::unique_ptr<CudaDotPlan>> fast = CudaDotPlan::Create(fast_problem.spec);
  FP8_ASSERT_OK(fast.status());
  EXPECT_NE((*fast)->Explain().find("CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1"), std::string::npos)
      << (*fast)->Explain();
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem promoted_problem, MakeDotProblem(o));
  StatusOr<std::unique_ptr<CudaDotPlan>> promoted = CudaDotPlan::Create(promoted_problem.spec);
  FP8_ASSERT_OK(promoted.status());
  EXPECT_NE((*promoted)->Explain().find("CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0"), std::string::npos)
      << (*promoted)->Explain();
  o.lhs_type = o.rhs_type = DType::kF8E5M2;
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem upcast_problem, MakeDotProblem(o));
  StatusOr<std::unique_ptr<CudaDotPlan>> upcast = CudaDotPlan::Create(upcast_problem.spec);
  FP8_ASSERT_OK(upcast.status());
  EXPECT_NE((*upcast)->Explain().find("upcast GEMM"), std::string::npos) << (*upcast)->Explain();
}

// The physics (docs/FACTS.md, accuracy table): on same-sign data the fast accumulator's
// truncated partial sums drift; promoted accumulation does not. At K=4096 FACTS measured 6.6e-2
// vs 5.0e-4 (130x); we require at least 10x.
TEST(CudaDotPrecisionTest, FastAccumulationIsTenTimesWorseOnPositiveDataAtK4096) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 256;
  o.n = 256;
  o.k = 4096;
  o.output_type = DType::kF32;
  o.distribution = Distribution::kPositive;
  o.seed = 4096;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem fast, MakeDotProblem(o));
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem promoted, MakeDotProblem(o));  // the same seed: the same data
  FP8_ASSERT_OK_AND_ASSIGN(const HostTensor exact, ReferenceDotExact(fast.spec, fast.arguments()));
  StatusOr<testing::GpuRun> fast_run = testing::RunOnGpu(fast);
  StatusOr<testing::GpuRun> promoted_run = testing::RunOnGpu(promoted);
  FP8_ASSERT_OK(fast_run.status());
  FP8_ASSERT_OK(promoted_run.status());
  FP8_ASSERT_OK_AND_ASSIGN(const ErrorStats fast_stats,
                           CompareToReference(fast_run->result.output, exact));
  FP8_ASSERT_OK_AND_ASSIGN(const ErrorStats promoted_stats,
                           CompareToReference(promoted_run->result.output, exact));
  const double fast_error = fast_stats.relative_frobenius;
  const double promoted_error = promoted_stats.relative_frobenius;
  std::printf("positive data, K=4096: fast %.3e, promoted %.3e (ratio %.1f)\n", fast_error,
              promoted_error, fast_error / promoted_error);
  EXPECT_GE(fast_error, 10.0 * promoted_error);
  EXPECT_LT(promoted_error, 2e-3);  // promoted stays accurate even here
}

// The CPU emulation (docs/accumulation-model.md) given the plan's split of K reproduces the GPU's
// FP8 output bit for bit, on fresh random data, for the heuristic's algorithm (split-K at
// M=N=64, K=16384 on the H200) and for autotuned plans, which may pick a split-K variant.
TEST(CudaDotPrecisionTest, EmulationWithThePlansSplitKIsBitIdentical) {
  FP8_SKIP_WITHOUT_GPU();
  struct Case {
    int64_t m, n, k;
    Distribution distribution;
    int autotune;
  };
  for (const Case& c : {Case{64, 64, 16384, Distribution::kSymmetric, 0},
                        Case{64, 64, 16384, Distribution::kMixedMagnitude, 0},
                        Case{128, 512, 4096, Distribution::kPositive, 8},
                        Case{64, 256, 7168, Distribution::kHeavyTailed, 8}}) {
    for (Precision precision : {Precision::kDefault, Precision::kHighest}) {
      DotProblemOptions o;
      o.m = c.m;
      o.n = c.n;
      o.k = c.k;
      o.output_type = DType::kF32;
      o.distribution = c.distribution;
      o.seed = static_cast<uint64_t>(c.k + c.m + c.autotune);
      o.precision_config.operand_precision = {precision, precision};
      FP8_ASSERT_OK_AND_ASSIGN(DotProblem p, MakeDotProblem(o));
      CudaDotOptions options;
      options.autotune_candidates = c.autotune;
      StatusOr<testing::GpuRun> run = testing::RunOnGpu(p, options);
      FP8_ASSERT_OK(run.status());
      Fp8AccumulatorModel model;
      model.split = run->info.k_split;
      FP8_ASSERT_OK_AND_ASSIGN(DotResult emulated, EmulatedDot(p.spec, p.arguments(), model));
      int64_t identical = 0;
      const int64_t total = emulated.output.element_count();
      for (int64_t i = 0; i < total; ++i) {
        identical += run->result.output.GetPhysical(i) == emulated.output.GetPhysical(i);
      }
      std::printf("M=%lld N=%lld K=%lld %s: split-K %d (%s): %lld of %lld identical\n",
                  static_cast<long long>(c.m), static_cast<long long>(c.n),
                  static_cast<long long>(c.k), PrecisionName(precision), model.split.slices,
                  run->info.algorithm.c_str(), static_cast<long long>(identical),
                  static_cast<long long>(total));
      EXPECT_EQ(identical, total) << run->explain;
    }
  }
}

TEST(CudaDotPrecisionTest, F32IsTf32ByDefaultAndFp32WithHighest) {
  FP8_SKIP_WITHOUT_GPU();
  DotProblemOptions o;
  o.m = 128;
  o.n = 96;
  o.k = 512;
  o.lhs_type = o.rhs_type = o.output_type = DType::kF32;
  o.seed = 32;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem tf32, MakeDotProblem(o));
  o.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem fp32, MakeDotProblem(o));
  const double tf32_error = ExpectMatchesReference(tf32, "f32 DEFAULT (TF32)");
  const double fp32_error = ExpectMatchesReference(fp32, "f32 HIGHEST (FP32)");
  // TF32 keeps 10 mantissa bits of each input, FP32 all 23: the errors differ by ~2^13.
  EXPECT_GT(tf32_error, 100.0 * fp32_error);
  StatusOr<std::unique_ptr<CudaDotPlan>> plan = CudaDotPlan::Create(tf32.spec);
  FP8_ASSERT_OK(plan.status());
  EXPECT_EQ((*plan)->info().compute_type, "CUBLAS_COMPUTE_32F_FAST_TF32");
  plan = CudaDotPlan::Create(fp32.spec);
  FP8_ASSERT_OK(plan.status());
  EXPECT_EQ((*plan)->info().compute_type, "CUBLAS_COMPUTE_32F");
}

TEST(CudaDotPrecisionTest, Bf16AndF16Dots) {
  FP8_SKIP_WITHOUT_GPU();
  uint64_t seed = 1600;
  for (DType type : {DType::kBF16, DType::kF16}) {
    for (DType out : {type, DType::kF32}) {
      for (Epilogue epilogue : {Epilogue::kDefault, Epilogue::kBiasRelu}) {
        DotProblemOptions o;
        o.m = 80;
        o.n = 112;
        o.k = 300;
        o.lhs_type = o.rhs_type = type;
        o.output_type = out;
        o.epilogue = epilogue;
        o.seed = ++seed;
        FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem, MakeDotProblem(o));
        ExpectMatchesReference(problem, StrFormat("%s dot -> %s %s", DTypeName(type),
                                                  DTypeName(out), EpilogueName(epilogue)));
      }
    }
    // A tensor scale on a non-FP8 dot is applied by fp8dot's epilogue.
    DotProblemOptions o;
    o.lhs_type = o.rhs_type = type;
    o.output_type = DType::kF32;
    o.lhs_scale_mode = o.rhs_scale_mode = ScaleMode::kTensor;
    FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem, MakeDotProblem(o));
    ExpectMatchesReference(problem, std::string(DTypeName(type)) + " tensor scales");
  }
}

}  // namespace
}  // namespace fp8dot
