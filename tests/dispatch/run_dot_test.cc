// RunDot: one Backend enum, one dispatcher; each backend gives exactly what its own function gives.
#include "fp8dot/run_dot.h"

#include <gtest/gtest.h>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_device.h"
#include "fp8dot/dot_problem.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

TEST(BackendTest, EveryNameParsesBackAndCpuMeansTheEmulation) {
  for (Backend backend : {Backend::kAuto, Backend::kCpuEmulation, Backend::kCpuBlas,
                          Backend::kCpuReference, Backend::kCuda}) {
    FP8_EXPECT_OK_AND_EQ(ParseBackend(BackendName(backend)), backend);
  }
  FP8_EXPECT_OK_AND_EQ(ParseBackend("cpu"), Backend::kCpuEmulation);
  StatusOr<Backend> bad = ParseBackend("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown backend 'tpu' (expected auto, cpu, cpu-emulation, cpu-blas, cpu-reference or "
            "cuda)");
}

TEST(BackendTest, AutoIsCudaExactlyWhenAHopperGpuIsPresent) {
  const Backend expected = QueryCudaDevice().ok() ? Backend::kCuda : Backend::kCpuEmulation;
  EXPECT_EQ(ResolveBackend(Backend::kAuto), expected);
  for (Backend backend :
       {Backend::kCpuEmulation, Backend::kCpuBlas, Backend::kCpuReference, Backend::kCuda}) {
    EXPECT_EQ(ResolveBackend(backend), backend);
  }
  EXPECT_TRUE(IsCpuBackend(Backend::kCpuBlas));
  EXPECT_FALSE(IsCpuBackend(Backend::kCuda));
  EXPECT_FALSE(IsCpuBackend(Backend::kAuto));
}

StatusOr<DotProblem> RandomProblem(Precision precision) {
  DotProblemOptions options;
  options.m = 24;
  options.n = 40;
  options.k = 512;
  options.output_type = DType::kF32;
  options.precision_config.operand_precision = {precision, precision};
  options.distribution = Distribution::kPositive;  // fast accumulation visibly differs
  options.seed = 11;
  return MakeDotProblem(options);
}

void ExpectBitIdentical(const HostTensor& a, const HostTensor& b) {
  ASSERT_EQ(a.dims(), b.dims());
  ASSERT_EQ(a.dtype(), b.dtype());
  for (int64_t i = 0; i < a.element_count(); ++i) {
    ASSERT_EQ(a.GetPhysical(i), b.GetPhysical(i)) << "element " << i;
  }
}

TEST(RunDotTest, EachCpuBackendIsItsOwnFunction) {
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem p, RandomProblem(Precision::kDefault));
  Fp8AccumulatorModel model;
  model.split.slices = 2;  // reported back in DotRunInfo::k_split
  RunDotOptions options;
  options.accumulator_model = model;
  struct Case {
    Backend backend;
    StatusOr<DotResult> direct;
  };
  Case cases[] = {{Backend::kCpuEmulation, EmulatedDot(p.spec, p.arguments(), model)},
                  {Backend::kCpuBlas, BlasDot(p.spec, p.arguments())},
                  {Backend::kCpuReference, ReferenceDot(p.spec, p.arguments())}};
  for (const Case& c : cases) {
    FP8_ASSERT_OK(c.direct);
    DotRunInfo info;
    StatusOr<DotResult> run = RunDot(c.backend, p.spec, p.arguments(), options, &info);
    FP8_ASSERT_OK(run);
    EXPECT_EQ(info.backend, c.backend);
    EXPECT_EQ(info.plan, nullptr);
    EXPECT_GE(info.milliseconds, 0.0);
    EXPECT_EQ(info.description.rfind("cpu (", 0), 0u) << info.description;
    EXPECT_EQ(run->accumulation, AccumulationMode::kFp8Fast);
    ExpectBitIdentical(run->output, c.direct->output);
  }
  DotRunInfo emulation;
  FP8_ASSERT_OK(RunDot(Backend::kCpuEmulation, p.spec, p.arguments(), options, &emulation));
  EXPECT_EQ(emulation.k_split.slices, 2);
}

TEST(RunDotTest, TheEmulationFollowsThePrecisionConfig) {
  // The same data under DEFAULT and HIGHEST: the resolved modes differ, and so do the outputs.
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem fast, RandomProblem(Precision::kDefault));
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem promoted, RandomProblem(Precision::kHighest));
  StatusOr<DotResult> a = RunDot(Backend::kCpuEmulation, fast.spec, fast.arguments());
  StatusOr<DotResult> b = RunDot(Backend::kCpuEmulation, promoted.spec, promoted.arguments());
  FP8_ASSERT_OK(a);
  FP8_ASSERT_OK(b);
  EXPECT_EQ(a->accumulation, AccumulationMode::kFp8Fast);
  EXPECT_EQ(b->accumulation, AccumulationMode::kFp8Promoted);
  int64_t differ = 0;
  for (int64_t i = 0; i < a->output.element_count(); ++i) {
    differ += a->output.GetPhysical(i) != b->output.GetPhysical(i);
  }
  EXPECT_GT(differ, 0);
}

TEST(RunDotTest, CudaRunsTheCachedPlanOrSaysWhyNot) {
  FP8_ASSERT_OK_AND_ASSIGN(const DotProblem p, RandomProblem(Precision::kHighest));
  DotRunInfo info;
  StatusOr<DotResult> run = RunDot(Backend::kCuda, p.spec, p.arguments(), {}, &info);
  if (!QueryCudaDevice().ok()) {
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.status().code(), StatusCode::kUnavailable) << run.status().message();
    GTEST_SKIP() << "no Hopper GPU: " << run.status().message();
  }
  FP8_ASSERT_OK(run);
  EXPECT_EQ(info.backend, Backend::kCuda);
  ASSERT_NE(info.plan, nullptr);
  FP8_ASSERT_OK_AND_ASSIGN(CudaDotPlan * cached, GetCachedCudaDotPlan(p.spec));
  EXPECT_EQ(info.plan, cached);
  EXPECT_EQ(info.plan->info().fast_accum, 0);  // HIGHEST: promoted
  EXPECT_GT(info.milliseconds, 0.0);
}

}  // namespace
}  // namespace fp8dot
