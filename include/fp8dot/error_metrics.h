// How far a result is from the reference: the numbers the CLI, tests and benchmarks report.
#pragma once

#include "fp8dot/tensor.h"

namespace fp8dot {

struct ErrorStats {
  double relative_frobenius = 0;  // ||actual - reference||_F / ||reference||_F
  double max_abs = 0;             // max |actual - reference|
  double max_relative = 0;        // max |actual - reference| / max(|reference|, tiny)
  int64_t nan_count = 0;          // NaNs in actual where the reference is finite
  int64_t count = 0;
};

// `actual` (any type/layout) against `reference` (same dims). `actual_scale` divides actual
// first (the output scale of an FP8 output). Fails when the dims differ.
StatusOr<ErrorStats> CompareToReference(const HostTensor& actual, const HostTensor& reference,
                                        double actual_scale = 1.0);

}  // namespace fp8dot
