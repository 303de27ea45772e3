// Deterministic random tensors for tests, the CLI and benchmarks (never zeros).
#pragma once

#include <cstdint>

#include "fp8dot/tensor.h"

namespace fp8dot {

enum class Distribution {
  kSymmetric,       // uniform in [-4, 4]
  kPositive,        // uniform in [0, 4]: same-sign data, where fast accumulation is biased
  kHeavyTailed,     // random sign times 2^N(0, 2): many tiny values and rare huge ones
  kMixedMagnitude,  // uniform in [-1, 1] times 2^u, u uniform integer in [-8, 8]
};
inline constexpr Distribution kAllDistributions[] = {
    Distribution::kSymmetric, Distribution::kPositive, Distribution::kHeavyTailed,
    Distribution::kMixedMagnitude};

const char* DistributionName(Distribution distribution);  // "symmetric", "positive", ...
StatusOr<Distribution> ParseDistribution(std::string_view text);

// Values drawn in f64 and rounded to `dtype` with saturation, row-major.
StatusOr<HostTensor> RandomTensor(DType dtype, const Dims& dims, Distribution distribution,
                                  uint64_t seed);
// Uniform in [low, high), rounded to `dtype`.
StatusOr<HostTensor> UniformTensor(DType dtype, const Dims& dims, double low, double high,
                                   uint64_t seed);

}  // namespace fp8dot
