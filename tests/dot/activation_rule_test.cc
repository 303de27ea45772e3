// activation_rule.h: its exp against the C library's in double, SwiGLU and GELU against their
// definitions in double, and the edges a training run reaches (large inputs, zeros, NaN).
#include "dot/activation_rule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace fp8dot::activation_rule {
namespace {

// Distance in f32 units in the last place between an f32 result and an exact value.
double UlpError(float result, double exact) {
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(exact)) - 23);
  return std::fabs(result - exact) / ulp;
}

TEST(ActivationRuleTest, ExpIsWithinOneUlpOverItsWholeRange) {
  double worst = 0;
  for (double x = -87.0; x <= 87.0; x += 0.0137) {
    const float xf = static_cast<float>(x);
    worst = std::max(worst, UlpError(Exp(xf), std::exp(static_cast<double>(xf))));
  }
  // Reduction points (k ln 2 and halfway between them) and tiny arguments.
  for (int k = -125; k <= 126; ++k) {
    for (double offset : {-0.5, 0.0, 0.5}) {
      const float xf = static_cast<float>((k + offset) * std::log(2.0));
      if (xf < -87.0f || xf > 87.0f) continue;
      worst = std::max(worst, UlpError(Exp(xf), std::exp(static_cast<double>(xf))));
    }
  }
  for (float xf : {0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f}) {
    worst = std::max(worst, UlpError(Exp(xf), std::exp(static_cast<double>(xf))));
  }
  EXPECT_LE(worst, 1.0);  // 0.90 on a sweep 100 times as dense
  EXPECT_GT(worst, 0.0);  // not the C library's own exp in disguise
  EXPECT_EQ(Exp(0.0f), 1.0f);
}

TEST(ActivationRuleTest, ExpTakesItsArgumentToPlusOrMinus87) {
  EXPECT_NEAR(Exp(-87.0f), std::exp(-87.0), 1e-6 * std::exp(-87.0));
  EXPECT_NEAR(Exp(87.0f), std::exp(87.0), 1e-6 * std::exp(87.0));
  EXPECT_EQ(Exp(-100.0f), Exp(-87.0f));
  EXPECT_EQ(Exp(-std::numeric_limits<float>::infinity()), Exp(-87.0f));
  EXPECT_EQ(Exp(std::numeric_limits<float>::quiet_NaN()), Exp(-87.0f));
  EXPECT_EQ(Exp(100.0f), Exp(87.0f));
  EXPECT_EQ(Exp(std::numeric_limits<float>::infinity()), Exp(87.0f));
}

TEST(ActivationRuleTest, SwiGluIsSiluTimesUpWithinThreeUlp) {
  double worst = 0;
  for (double gate = -30; gate <= 30; gate += 0.0931) {
    for (double up : {1.0, -0.37, 3.5e-3, 1234.5}) {
      const float g = static_cast<float>(gate), u = static_cast<float>(up);
      const double exact = g / (1.0 + std::exp(-static_cast<double>(g))) * u;
      worst = std::max(worst, UlpError(SwiGlu(g, u), exact));
    }
  }
  // Exp's ulp shrinks through 1 + e; the reciprocal and the two products add half an ulp each
  // (2.6 on a sweep 10 times as dense).
  EXPECT_LE(worst, 3.0);
}

TEST(ActivationRuleTest, SwiGluEdges) {
  EXPECT_EQ(SwiGlu(0.0f, 5.0f), 0.0f);
  EXPECT_EQ(SwiGlu(3.0f, 0.0f), 0.0f);
  // For gate > 17, 1 + e^-gate rounds to 1: SiLU is the gate itself.
  EXPECT_EQ(SwiGlu(20.0f, 3.0f), 60.0f);
  EXPECT_EQ(SwiGlu(1e30f, 2.0f), 2e30f);
  // Below -87 the sigmoid stays at 1 / (1 + e^87): SiLU is tiny and keeps its sign (its true
  // value, under 1e-36, is below every FP8 scale either way).
  const float far_below = SwiGlu(-100.0f, 7.0f);
  EXPECT_LT(far_below, 0.0f);
  EXPECT_GT(far_below, -1e-34f);
  EXPECT_EQ(SwiGlu(-std::numeric_limits<float>::infinity(), 1.0f),
            -std::numeric_limits<float>::infinity());
  EXPECT_EQ(SwiGlu(std::numeric_limits<float>::infinity(), 2.0f),
            std::numeric_limits<float>::infinity());
  EXPECT_NEAR(SwiGlu(-1.0f, 2.0f), 2.0 * -1.0 / (1.0 + std::exp(1.0)), 1e-7);
  EXPECT_TRUE(std::isnan(SwiGlu(std::numeric_limits<float>::quiet_NaN(), 1.0f)));
  EXPECT_TRUE(std::isnan(SwiGlu(1.0f, std::numeric_limits<float>::quiet_NaN())));
}

// GELU's tanh form in double: u · σ(2z) = 0.5 · u · (1 + tanh(z)), z = √(2/π)(u + 0.044715u³).
double ExactGelu(double u) {
  const double z = std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u);
  return u / (1.0 + std::exp(-2.0 * z));
}

TEST(ActivationRuleTest, GeluIsItsTanhFormWithinTheBoundOfItsRoundings) {
  // Relative errors, in units of 2^-24 (half an ulp at most): the five roundings of y = 2z (u²,
  // the fma, two products, the constant) move y by 5 and so σ(y) by (1 - σ(y)) · |y| times as
  // much; exp (2), 1 + e, the reciprocal and the last product add 5. Where GELU is steep against
  // its value (u well below 0) the first term rules: 85 at u = -5, still 0.0003 of a bf16 ulp.
  // (0.60 of the bound at worst on a sweep 1000 times as dense.)
  double worst_positive = 0;
  for (double u = -9.5; u <= 9.5; u += 0.0173) {
    const float uf = static_cast<float>(u);
    const double exact = ExactGelu(uf);
    const double y = 2.0 * std::sqrt(2.0 / M_PI) * (uf + 0.044715 * uf * uf * uf);
    const double one_minus_sigmoid = 1.0 / (1.0 + std::exp(y));
    const double bound = 5.0 * one_minus_sigmoid * std::fabs(y) + 5.0;
    const double error = std::fabs(Gelu(uf) - exact) / std::fabs(exact) / std::ldexp(1.0, -24);
    EXPECT_LE(error, bound) << "u = " << uf;
    if (uf > 0) worst_positive = std::max(worst_positive, error);
  }
  EXPECT_LE(worst_positive, 5.0);  // 2.6 on the dense sweep
  EXPECT_GT(worst_positive, 0.0);  // not a double computation rounded once
  // The tanh form itself, where 1 + tanh is well conditioned.
  for (float u : {-2.0f, -0.5f, 0.25f, 1.0f, 3.0f}) {
    const double z = std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u);
    EXPECT_NEAR(Gelu(u), 0.5 * u * (1.0 + std::tanh(z)), 1e-6 * std::fabs(u));
  }
}

TEST(ActivationRuleTest, GeluEdges) {
  EXPECT_EQ(Gelu(0.0f), 0.0f);
  // Above about 5.3, 1 + e^-y rounds to 1: GELU is u itself.
  EXPECT_EQ(Gelu(6.0f), 6.0f);
  EXPECT_EQ(Gelu(1e30f), 1e30f);  // u³ overflows to inf on the way: still u
  // Below about -10 the sigmoid stays at 1 / (1 + e^87): GELU is tiny and keeps its sign.
  const float far_below = Gelu(-12.0f);
  EXPECT_LT(far_below, 0.0f);
  EXPECT_GT(far_below, -1e-34f);
  EXPECT_LT(Gelu(-1e30f), 0.0f);
  EXPECT_GT(Gelu(-1e30f), -1e-6f);
  EXPECT_EQ(Gelu(-std::numeric_limits<float>::infinity()), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(Gelu(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Gelu(std::numeric_limits<float>::quiet_NaN())));
  // GELU's known values: GELU(1) = 0.8412 (tanh form), its minimum -0.170 near u = -0.75.
  EXPECT_NEAR(Gelu(1.0f), 0.841192, 1e-6);
  EXPECT_NEAR(Gelu(-0.75f), ExactGelu(-0.75), 1e-7);
  EXPECT_NEAR(Gelu(-0.75f), -0.1700, 1e-3);
}

}  // namespace
}  // namespace fp8dot::activation_rule
