// The one error metric: norms over the elements finite in both, non-finite mismatches counted.
#include "fp8dot/error_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "status_matchers.h"

namespace fp8dot {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ErrorMetricsTest, NormsAreRelativeToTheReferenceMagnitude) {
  const std::vector<double> reference = {3.0, -4.0, 0.0, 0.001};
  const std::vector<double> actual = {3.0, -4.5, 0.25, 0.001};
  const ErrorStats e = CompareValues(actual, reference);
  EXPECT_EQ(e.count, 4);
  EXPECT_DOUBLE_EQ(e.max_abs, 0.5);
  // max |a - r| / max |r| = 0.5 / 4: not blown up by the element whose reference is 0.
  EXPECT_DOUBLE_EQ(e.max_relative, 0.125);
  const double diff = std::sqrt(0.25 + 0.0625);
  const double norm = std::sqrt(9.0 + 16.0 + 0.001 * 0.001);
  EXPECT_DOUBLE_EQ(e.relative_frobenius, diff / norm);
  EXPECT_EQ(e.nonfinite_mismatches, 0);
}

TEST(ErrorMetricsTest, CountsTheNonFiniteElementsOfEachSide) {
  // An all-inf result that matches its all-inf reference has no finite pair, so the norms are 0:
  // the counts are what keep it from reading as "error 0".
  const std::vector<double> reference = {kInf, kInf, -kInf, kNaN};
  const ErrorStats all_inf = CompareValues(reference, reference);
  EXPECT_EQ(all_inf.relative_frobenius, 0.0);
  EXPECT_EQ(all_inf.nonfinite_mismatches, 0);
  EXPECT_EQ(all_inf.nonfinite_reference, 4);
  EXPECT_EQ(all_inf.nonfinite_actual, 4);
  EXPECT_NE(all_inf.ToString().find("NaN/inf elements: reference 4, output 4, mismatches 0 (of 4)"),
            std::string::npos)
      << all_inf.ToString();
  const ErrorStats mixed =
      CompareValues(std::vector<double>{1.0, kNaN, 3.0}, std::vector<double>{kInf, 2.0, 3.0});
  EXPECT_EQ(mixed.nonfinite_reference, 1);
  EXPECT_EQ(mixed.nonfinite_actual, 1);
  EXPECT_EQ(mixed.nonfinite_mismatches, 2);
}

TEST(ErrorMetricsTest, NonFiniteValuesAgreeOnlyWhenTheSame) {
  const std::vector<double> reference = {kNaN, kInf, -kInf, 1.0, 2.0, kInf};
  const std::vector<double> actual = {kNaN, kInf, -kInf, kNaN, kInf, 1.0};
  const ErrorStats e = CompareValues(actual, reference);
  EXPECT_EQ(e.nonfinite_mismatches, 3);  // NaN for 1, inf for 2, 1 for inf
  EXPECT_EQ(e.max_abs, 0.0);             // no finite pair differs
  EXPECT_EQ(e.relative_frobenius, 0.0);
}

TEST(ErrorMetricsTest, AZeroReferenceGivesAbsoluteNumbers) {
  const ErrorStats e = CompareValues(std::vector<double>{0.5, 0.0}, std::vector<double>{0, 0});
  EXPECT_DOUBLE_EQ(e.relative_frobenius, 0.5);
  EXPECT_DOUBLE_EQ(e.max_relative, 0.5);
}

TEST(ErrorMetricsTest, TensorsAreComparedInLogicalOrderAfterTheScale) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor actual,
                           HostTensor::Create(DType::kF32, {2, 2}, {0, 1}));  // column-major
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor reference, HostTensor::Create(DType::kF64, {2, 2}));
  // Logical [[1, 2], [3, 4]]; actual holds it times 2 (an output scale of 2), column-major.
  const double logical[2][2] = {{1, 2}, {3, 4}};
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      reference.SetPhysical(i * 2 + j, logical[i][j]);
      actual.SetPhysical(j * 2 + i, 2 * logical[i][j]);
    }
  }
  FP8_ASSERT_OK_AND_ASSIGN(ErrorStats e, CompareToReference(actual, reference, 2.0));
  EXPECT_EQ(e.max_abs, 0.0);
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor other, HostTensor::Create(DType::kF64, {4}));
  StatusOr<ErrorStats> mismatch = CompareToReference(other, reference);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().message(), "result dims [4] differ from the reference's [2,2]");
}

}  // namespace
}  // namespace fp8dot
