#include "fp8dot/accumulator_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace fp8dot {
namespace {

// Adds `products` as one group, each aligned by its own exponent (as a product of a power of two
// and an FP8 value is).
void AddGroup(Fp8Accumulator& accumulator, const std::vector<double>& products) {
  std::vector<int> exponents;
  for (double p : products) exponents.push_back(p == 0.0 || !std::isfinite(p) ? 0 : std::ilogb(p));
  accumulator.AddGroup(products.data(), exponents.data(), static_cast<int>(products.size()));
}

TEST(AccumulatorModelTest, ExactWhenEverythingFitsInTheMantissa) {
  Fp8Accumulator accumulator{Fp8AccumulatorModel()};
  AddGroup(accumulator, {1.0, 2.0, 0.5, -0.25});
  EXPECT_EQ(accumulator.value(), 3.25);
  AddGroup(accumulator, {1.0, 2.0});
  EXPECT_EQ(accumulator.value(), 6.25);
}

TEST(AccumulatorModelTest, TermsBelowTheAlignedQuantumAreTruncatedAway) {
  // Largest term 256 = 2^8 with 13 fraction bits: quantum 2^-5. 2^-6 is cut to 0.
  Fp8AccumulatorModel model;
  Fp8Accumulator accumulator(model);
  AddGroup(accumulator, {256.0, std::ldexp(1.0, -6), std::ldexp(1.0, -5) * 3});
  EXPECT_EQ(accumulator.value(), 256.0 + std::ldexp(3.0, -5));
  // Nearest rounding keeps half-quantum terms on average: 2^-6 rounds to even (0) but 3*2^-6
  // rounds to 2^-4.
  model.rounding = AccumulatorRounding::kNearestEven;
  Fp8Accumulator nearest(model);
  AddGroup(nearest, {256.0, std::ldexp(3.0, -6)});
  EXPECT_EQ(nearest.value(), 256.0 + std::ldexp(1.0, -4));
}

TEST(AccumulatorModelTest, NormalisationCutsTheSum) {
  // 8191 + 1 + 0.75: all terms fit the quantum of 8191 (2^12 -> 2^-1), 0.75 cuts to 0.5, and
  // the sum 8192.5 renormalises to quantum 2^0: 8192.
  Fp8Accumulator accumulator{Fp8AccumulatorModel()};
  AddGroup(accumulator, {8191.0, 1.0, 0.75});
  EXPECT_EQ(accumulator.value(), 8192.0);
}

TEST(AccumulatorModelTest, NonFiniteValuesPropagate) {
  Fp8Accumulator accumulator{Fp8AccumulatorModel()};
  AddGroup(accumulator, {1.0, INFINITY});
  EXPECT_TRUE(std::isinf(accumulator.value()));
  AddGroup(accumulator, {NAN});
  EXPECT_TRUE(std::isnan(accumulator.value()));
}

TEST(AccumulatorModelTest, ProductsAlignByTheSumOfTheirOperandsExponents) {
  // 1.875 * 1.875 = 3.515625 has exponent 1, but its operands' exponents sum to 0: the aligned
  // quantum is 2^-13, so three 2^-13 products survive the alignment (and one 2^-12 the
  // normalisation). Aligned by the product's own exponent the quantum is 2^-12 and they vanish.
  const double big = 1.875 * 1.875, small = std::ldexp(1.0, -13);
  const double products[] = {big, small, small, small};
  for (ProductAlignment alignment :
       {ProductAlignment::kOperandExponents, ProductAlignment::kProductValue}) {
    int exponents[4];
    exponents[0] = ProductAlignmentExponent(1.875, -6, 1.875, -6, alignment);
    for (int i = 1; i < 4; ++i)
      exponents[i] = ProductAlignmentExponent(small, -6, 1.0, -6, alignment);
    Fp8AccumulatorModel model;
    model.alignment = alignment;
    Fp8Accumulator accumulator(model);
    accumulator.AddGroup(products, exponents, 4);
    EXPECT_EQ(accumulator.value(),
              alignment == ProductAlignment::kOperandExponents ? big + std::ldexp(1.0, -12) : big);
  }
  // Subnormal operands align as if they had the type's smallest normal exponent: 2^-9 (an e4m3
  // subnormal) times 2^8 aligns at -6 + 8 = 2, not at -1.
  EXPECT_EQ(ProductAlignmentExponent(std::ldexp(1.0, -9), -6, 256.0, -6,
                                     ProductAlignment::kOperandExponents),
            2);
  EXPECT_EQ(
      ProductAlignmentExponent(std::ldexp(1.0, -9), -6, 256.0, -6, ProductAlignment::kProductValue),
      -1);
}

// The model as the header states it, in floating point with library calls only: what the
// accumulator computes faster (integer quanta, exponents read from the bits).
double ModelStep(const Fp8AccumulatorModel& model, double value,
                 const std::vector<double>& products, const std::vector<int>& exponents) {
  const auto cut = [&](double x, int exponent) {
    const double units = x / std::ldexp(1.0, exponent);
    return (model.rounding == AccumulatorRounding::kTruncate ? std::trunc(units)
                                                             : std::nearbyint(units)) *
           std::ldexp(1.0, exponent);
  };
  bool any_term = value != 0.0;
  int largest = any_term ? std::ilogb(value) : 0;
  for (size_t i = 0; i < products.size(); ++i) {
    if (products[i] == 0.0) continue;
    largest = any_term ? std::max(largest, exponents[i]) : exponents[i];
    any_term = true;
  }
  if (!any_term) return value + 0.0;
  double sum = cut(value, largest - model.mantissa_bits);
  for (double p : products) sum += cut(p, largest - model.mantissa_bits);
  return sum == 0.0 ? 0.0 : cut(sum, std::ilogb(sum) - model.mantissa_bits);
}

TEST(AccumulatorModelTest, EveryWidthRoundingAndGroupSizeFollowsTheModelBitForBit) {
  // Random e4m3-like products (significands 8..15 times 2^e, some operands subnormal, some
  // zero), aligned by their operands' exponents, over 24 steps each: the accumulator's value
  // after every step equals the model's, for every width from 1 to 50 bits (the widest ones,
  // with large groups, are past the integer sum's bounds and take the floating-point one).
  std::mt19937_64 random(20261207);
  std::uniform_int_distribution<int> significand(0, 15), exponent(-6, 8), coin(0, 9);
  for (int bits = 1; bits <= 50; ++bits) {
    for (AccumulatorRounding rounding :
         {AccumulatorRounding::kTruncate, AccumulatorRounding::kNearestEven}) {
      for (int group : {1, 4, 32, 256}) {
        Fp8AccumulatorModel model;
        model.mantissa_bits = bits;
        model.rounding = rounding;
        model.group_size = group;
        model.promotion_interval = group;
        Fp8Accumulator accumulator(model);
        double expected = 0.0;
        for (int step = 0; step < 24; ++step) {
          std::vector<double> products(static_cast<size_t>(group));
          std::vector<int> exponents(static_cast<size_t>(group));
          for (int i = 0; i < group; ++i) {
            double operands[2];
            int operand_exponents[2];
            for (int j = 0; j < 2; ++j) {
              // coin 0: zero; 1: a subnormal (significand below 8 at the smallest exponent).
              const int kind = coin(random);
              const int e = kind == 1 ? -6 : exponent(random);
              const int m = kind == 0   ? 0
                            : kind == 1 ? significand(random) % 8
                                        : 8 + significand(random) % 8;
              operands[j] = std::ldexp(m * (coin(random) < 5 ? -1.0 : 1.0), e - 3);
              operand_exponents[j] = e;
            }
            products[static_cast<size_t>(i)] = operands[0] * operands[1];
            exponents[static_cast<size_t>(i)] = operand_exponents[0] + operand_exponents[1];
          }
          accumulator.AddGroup(products.data(), exponents.data(), group);
          expected = ModelStep(model, expected, products, exponents);
          ASSERT_EQ(accumulator.value(), expected)
              << bits << " bits, " << AccumulatorRoundingName(rounding) << ", groups of " << group
              << ", step " << step;
        }
      }
    }
  }
}

TEST(AccumulatorModelTest, KSliceEndsCutWholeTilesEvenly) {
  // cuBLASLt's split-K on the H200 (docs/accuracy.md): K=16384 in 6 slices of 22 tiles of 128.
  EXPECT_EQ(KSliceEnds(16384, {6, 128}),
            (std::vector<int64_t>{2816, 5632, 8448, 11264, 14080, 16384}));
  EXPECT_EQ(KSliceEnds(65536, {25, 128}).size(), 25u);
  EXPECT_EQ(KSliceEnds(65536, {25, 128})[0], 2688);
  EXPECT_EQ(KSliceEnds(1000, {1, 128}), (std::vector<int64_t>{1000}));
  // More slices than tiles: one tile each.
  EXPECT_EQ(KSliceEnds(300, {8, 128}), (std::vector<int64_t>{128, 256, 300}));
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
  model = {};
  model.split.slices = 0;
  EXPECT_EQ(model.Validate().message(), "split-K slices must be >= 1, got 0");
  model.split = {4, 96};
  EXPECT_EQ(model.Validate().message(),
            "split-K tile must be a positive multiple of promotion_interval (128), got 96");
  EXPECT_TRUE(Fp8AccumulatorModel().Validate().ok());
}

}  // namespace
}  // namespace fp8dot
