#include "fp8dot/accumulator_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp8dot {
namespace {

TEST(AccumulatorModelTest, ExactWhenEverythingFitsInTheMantissa) {
  Fp8Accumulator accumulator{Fp8AccumulatorModel()};
  const double products[] = {1.0, 2.0, 0.5, -0.25};
  accumulator.AddGroup(products, 4);
  EXPECT_EQ(accumulator.value(), 3.25);
  accumulator.AddGroup(products, 2);
  EXPECT_EQ(accumulator.value(), 6.25);
}

TEST(AccumulatorModelTest, TermsBelowTheAlignedQuantumAreTruncatedAway) {
  // Largest term 256 = 2^8 with 13 fraction bits: quantum 2^-5. 2^-6 is cut to 0.
  Fp8AccumulatorModel model;
  Fp8Accumulator accumulator(model);
  const double first[] = {256.0, std::ldexp(1.0, -6), std::ldexp(1.0, -5) * 3};
  accumulator.AddGroup(first, 3);
  EXPECT_EQ(accumulator.value(), 256.0 + std::ldexp(3.0, -5));
  // Nearest rounding keeps half-quantum terms on average: 2^-6 rounds to even (0) but 3*2^-6
  // rounds to 2^-4.
  model.rounding = AccumulatorRounding::kNearestEven;
  Fp8Accumulator nearest(model);
  const double second[] = {256.0, std::ldexp(3.0, -6)};
  nearest.AddGroup(second, 2);
  EXPECT_EQ(nearest.value(), 256.0 + std::ldexp(1.0, -4));
}

TEST(AccumulatorModelTest, NormalisationCutsTheSum) {
  // 8191 + 1 + 0.75: all terms fit the quantum of 8191 (2^12 -> 2^-1), 0.75 cuts to 0.5, and
  // the sum 8192.5 renormalises to quantum 2^0: 8192.
  Fp8Accumulator accumulator{Fp8AccumulatorModel()};
  const double products[] = {8191.0, 1.0, 0.75};
  accumulator.AddGroup(products, 3);
  EXPECT_EQ(accumulator.value(), 8192.0);
}

TEST(AccumulatorModelTest, NonFiniteValuesPropagate) {
  Fp8Accumulator accumulator{Fp8AccumulatorModel()};
  const double products[] = {1.0, INFINITY};
  accumulator.AddGroup(products, 2);
  EXPECT_TRUE(std::isinf(accumulator.value()));
  const double nan[] = {NAN};
  accumulator.AddGroup(nan, 1);
  EXPECT_TRUE(std::isnan(accumulator.value()));
}

TEST(AccumulatorModelTest, ValidatesParameters) {
  Fp8AccumulatorModel model;
  model.mantissa_bits = 0;
  EXPECT_EQ(model.Validate().message(), "accumulator mantissa_bits must be in [1, 50], got 0");
  model = {};
  model.group_size = 48;
  EXPECT_EQ(model.Validate().message(),
            "promotion_interval must be a positive multiple of group_size (48), got 128");
  model.group_size = 0;
  EXPECT_EQ(model.Validate().message(), "accumulator group_size must be >= 1, got 0");
  EXPECT_TRUE(Fp8AccumulatorModel().Validate().ok());
}

}  // namespace
}  // namespace fp8dot
