#include "fp8dot/random.h"

#include <cmath>
#include <random>
#include <string>

namespace fp8dot {
namespace {

// Uniform double in [0, 1) from 53 random bits: the same on every platform, unlike
// std::uniform_real_distribution.
double Uniform01(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

// Standard normal by Box-Muller (also platform independent).
double Normal(std::mt19937_64& engine) {
  const double u1 = 1.0 - Uniform01(engine);
  const double u2 = Uniform01(engine);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

double Draw(Distribution distribution, std::mt19937_64& engine) {
  switch (distribution) {
    case Distribution::kSymmetric:
      return -4.0 + 8.0 * Uniform01(engine);
    case Distribution::kPositive:
      return 4.0 * Uniform01(engine);
    case Distribution::kHeavyTailed: {
      const double sign = (engine() & 1) ? 1.0 : -1.0;
      return sign * std::exp2(2.0 * Normal(engine));
    }
    case Distribution::kMixedMagnitude: {
      const int exponent = static_cast<int>(engine() % 17) - 8;
      return (2.0 * Uniform01(engine) - 1.0) * std::ldexp(1.0, exponent);
    }
  }
  return 0.0;
}

}  // namespace

const char* DistributionName(Distribution distribution) {
  switch (distribution) {
    case Distribution::kSymmetric:
      return "symmetric";
    case Distribution::kPositive:
      return "positive";
    case Distribution::kHeavyTailed:
      return "heavy-tailed";
    case Distribution::kMixedMagnitude:
      return "mixed";
  }
  return "?";
}

StatusOr<Distribution> ParseDistribution(std::string_view text) {
  for (Distribution distribution : kAllDistributions) {
    if (text == DistributionName(distribution)) return distribution;
  }
  return InvalidArgument(
      "unknown distribution '%.*s' (expected symmetric, positive, heavy-tailed or mixed)",
      static_cast<int>(text.size()), text.data());
}

StatusOr<HostTensor> RandomTensor(DType dtype, const Dims& dims, Distribution distribution,
                                  uint64_t seed) {
  FP8_ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::Create(dtype, dims));
  std::mt19937_64 engine(seed);
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    tensor.SetPhysical(i, Draw(distribution, engine), Overflow::kSaturate);
  }
  return tensor;
}

StatusOr<HostTensor> UniformTensor(DType dtype, const Dims& dims, double low, double high,
                                   uint64_t seed) {
  FP8_ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::Create(dtype, dims));
  std::mt19937_64 engine(seed);
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    tensor.SetPhysical(i, low + (high - low) * Uniform01(engine), Overflow::kSaturate);
  }
  return tensor;
}

}  // namespace fp8dot
