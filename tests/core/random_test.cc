#include "fp8dot/random.h"
#include "status_matchers.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp8dot {
namespace {

TEST(RandomTest, DeterministicNonZeroAndInRange) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor a,
                           RandomTensor(DType::kF32, {1000}, Distribution::kSymmetric, 5));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor b,
                           RandomTensor(DType::kF32, {1000}, Distribution::kSymmetric, 5));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor c,
                           RandomTensor(DType::kF32, {1000}, Distribution::kSymmetric, 6));
  int zeros = 0, differ = 0;
  double sum = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(a.GetPhysical(i), b.GetPhysical(i));
    differ += a.GetPhysical(i) != c.GetPhysical(i);
    zeros += a.GetPhysical(i) == 0.0;
    EXPECT_LE(std::fabs(a.GetPhysical(i)), 4.0);
    sum += a.GetPhysical(i);
  }
  EXPECT_EQ(zeros, 0);
  EXPECT_GT(differ, 990);
  EXPECT_LT(std::fabs(sum / 1000), 0.5);  // symmetric: mean near 0 (sd of mean ~0.07)
}

TEST(RandomTest, PositiveAndHeavyTailedShapes) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor positive,
                           RandomTensor(DType::kF8E4M3FN, {4096}, Distribution::kPositive, 1));
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor heavy,
                           RandomTensor(DType::kF8E4M3FN, {4096}, Distribution::kHeavyTailed, 1));
  double max_heavy = 0;
  int tiny = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    EXPECT_GE(positive.GetPhysical(i), 0.0);
    max_heavy = std::fmax(max_heavy, std::fabs(heavy.GetPhysical(i)));
    tiny += std::fabs(heavy.GetPhysical(i)) < 0.05;
  }
  // |x| = 2^(2 N(0,1)): |x| > 16 when N > 2 (2.3%), |x| < 0.05 when N < -2.16 (1.5%).
  EXPECT_GT(max_heavy, 16.0);
  EXPECT_LE(max_heavy, 448.0);
  EXPECT_GT(tiny, 20);
}

TEST(RandomTest, ParsesDistributionNames) {
  for (Distribution d : kAllDistributions) {
    FP8_ASSERT_OK_AND_ASSIGN(Distribution parsed, ParseDistribution(DistributionName(d)));
    EXPECT_EQ(parsed, d);
  }
  EXPECT_EQ(
      ParseDistribution("gaussian").status().message(),
      "unknown distribution 'gaussian' (expected symmetric, positive, heavy-tailed or mixed)");
}

}  // namespace
}  // namespace fp8dot
