#include "fp8dot/dot_problem.h"
#include "status_matchers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <string>

namespace fp8dot {
namespace {

TEST(DotProblemTest, BuildsEveryTensorTheSpecNeeds) {
  DotProblemOptions options;
  options.batch = 2;
  options.m = 128;
  options.n = 256;
  options.k = 256;
  options.output_type = DType::kF8E4M3FN;
  options.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  options.lhs_scale_mode = ScaleMode::kBlock1x128;
  options.rhs_scale_mode = ScaleMode::kBlock128x128;
  options.epilogue = Epilogue::kBiasGelu;
  options.beta = 0.5;
  options.output_scale = 2.0;
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem, MakeDotProblem(options));
  EXPECT_EQ(problem.lhs.dims(), (Dims{2, 128, 256}));
  EXPECT_EQ(problem.lhs_scale->dims(), (Dims{128, 2}));
  EXPECT_EQ(problem.rhs_scale->dims(), (Dims{2, 2}));
  EXPECT_EQ(problem.c->dims(), (Dims{2, 128, 256}));
  EXPECT_EQ(problem.c->dtype(), DType::kBF16);
  EXPECT_EQ(problem.bias->dims(), (Dims{256}));
  EXPECT_EQ(problem.output_scale->GetPhysical(0), 2.0);
  EXPECT_TRUE(CheckArgumentsMatchSpec(problem.spec, problem.arguments()).ok());
}

TEST(DotProblemTest, GivenTensorsAreUsedAndCheckedAgainstTheSpec) {
  DotProblemOptions options;
  FP8_ASSERT_OK_AND_ASSIGN(options.lhs,
                           RandomTensor(DType::kF8E5M2, {16, 32}, Distribution::kPositive, 9));
  FP8_ASSERT_OK_AND_ASSIGN(options.rhs,
                           RandomTensor(DType::kF8E4M3FN, {32, 8}, Distribution::kPositive, 10));
  options.lhs_scale_mode = ScaleMode::kOuterVector;
  FP8_ASSERT_OK_AND_ASSIGN(options.lhs_scale, HostTensor::Create(DType::kF32, {15}));
  EXPECT_EQ(MakeDotProblem(options).status().message(),
            "lhs scale (mode outer) must have shape [16], got [15]");
  FP8_ASSERT_OK_AND_ASSIGN(options.lhs_scale, UniformTensor(DType::kF32, {16}, 1, 2, 3));
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem problem, MakeDotProblem(options));
  EXPECT_EQ(problem.spec.lhs.dtype, DType::kF8E5M2);
  EXPECT_EQ(problem.lhs.GetPhysical(5), options.lhs->GetPhysical(5));

  // A given scale keeps its layout (here column-major, cuBLASLt's order for lhs 1x128 blocks).
  DotProblemOptions blocked;
  blocked.m = 256;
  blocked.k = 256;
  blocked.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  blocked.lhs_scale_mode = ScaleMode::kBlock1x128;
  blocked.rhs_scale_mode = ScaleMode::kBlock1x128;
  FP8_ASSERT_OK_AND_ASSIGN(blocked.lhs_scale, HostTensor::Create(DType::kF32, {256, 2}, {0, 1}));
  FP8_ASSERT_OK_AND_ASSIGN(DotProblem column_major, MakeDotProblem(blocked));
  EXPECT_EQ(column_major.spec.lhs_scale.minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(CheckArgumentsMatchSpec(column_major.spec, column_major.arguments()).ok());

  // A tensor that does not match the spec is reported by name.
  DotArguments arguments = problem.arguments();
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor wrong, HostTensor::Create(DType::kF32, {32, 8}));
  arguments.rhs = &wrong;
  EXPECT_EQ(CheckArgumentsMatchSpec(problem.spec, arguments).message(),
            "rhs is f32[32,8]{1,0} but the dot expects f8e4m3fn[32,8]{1,0}");
  arguments.rhs = &problem.rhs;
  arguments.bias = &wrong;
  EXPECT_EQ(CheckArgumentsMatchSpec(problem.spec, arguments).message(),
            "bias was given but the dot does not use one");
}

TEST(DotProblemTest, RefusesAnOutputScaleThatIsNotFiniteAndPositive) {
  for (double scale : {0.0, -2.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    DotProblemOptions options;
    options.m = options.n = 16;
    options.k = 32;
    options.output_type = DType::kF8E4M3FN;
    options.output_scale = scale;
    StatusOr<DotProblem> problem = MakeDotProblem(options);
    ASSERT_FALSE(problem.ok()) << scale;
    EXPECT_NE(problem.status().message().find("output scale must be finite and > 0"),
              std::string::npos)
        << problem.status().message();
  }
}

// M = N = K = 100,000 used to spend minutes filling inputs before failing: the whole problem is
// measured against the limit first.
TEST(DotProblemTest, RefusesAProblemPastTheMemoryLimitBeforeAllocating) {
  DotProblemOptions huge;
  huge.m = huge.n = huge.k = 100000;
  StatusOr<DotProblem> problem = MakeDotProblem(huge);
  ASSERT_FALSE(problem.ok());
  EXPECT_EQ(problem.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(problem.status().message().find(
                "needs 140000000000 bytes (operands 20000000000, scales 0, C 0, bias 0, output "
                "40000000000, f64 reference 80000000000), more than the memory limit of"),
            std::string::npos)
      << problem.status().message();

  // Every tensor counts: [4,8] x [8,4] f8 with per-row/column scales, C and bias in f32.
  DotProblemOptions small;
  small.m = small.n = 4;
  small.k = 8;
  small.precision_config.operand_precision = {Precision::kHighest, Precision::kHighest};
  small.lhs_scale_mode = ScaleMode::kOuterVector;
  small.rhs_scale_mode = ScaleMode::kOuterVector;
  small.beta = 1.0;
  small.epilogue = Epilogue::kBias;
  // operands 64, scales 32, C 64, bias 16, output 64, reference 128.
  small.memory_limit_bytes = 368;
  FP8_EXPECT_OK(MakeDotProblem(small).status());
  small.memory_limit_bytes = 367;
  problem = MakeDotProblem(small);
  ASSERT_FALSE(problem.ok());
  EXPECT_NE(problem.status().message().find("needs 368 bytes (operands 64, scales 32, C 64, bias "
                                            "16, output 64, f64 reference 128), more than the "
                                            "memory limit of 367 bytes"),
            std::string::npos)
      << problem.status().message();
}

TEST(DotProblemTest, DefaultMemoryLimitIsHalfThePhysicalMemory) {
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  EXPECT_NEAR(static_cast<double>(DefaultMemoryLimitBytes()), physical / 2.0, 4096.0);
}

}  // namespace
}  // namespace fp8dot
