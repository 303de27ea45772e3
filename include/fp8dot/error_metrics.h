// How far a result is from a reference: the one error metric the CLI (`dot`, `accuracy`, `run
// --compare`), the tests and the benchmarks report.
#pragma once

#include <span>
#include <string>

#include "fp8dot/tensor.h"

namespace fp8dot {

struct ErrorStats {
  // Over the elements that are finite in both:
  double relative_frobenius = 0;  // ||actual - reference||_F / ||reference||_F
  double max_abs = 0;             // max |actual - reference|
  // max |actual - reference| / max |reference|: relative to the output's magnitude, since an
  // element-wise relative error is meaningless where the reference is near zero (a relu output).
  double max_relative = 0;
  // Elements where either is NaN or inf, and they are not the same (both NaN, or equal infs):
  // unwritten outputs, overflows. Counted here, left out of the norms above.
  int64_t nonfinite_mismatches = 0;
  // NaN or inf elements of each side, matching or not. The norms above cover only the elements
  // finite in both, so a result whose reference is all inf must not read as "error 0".
  int64_t nonfinite_reference = 0;
  int64_t nonfinite_actual = 0;
  int64_t count = 0;  // elements compared

  // "relative Frobenius 1.2e-03, max abs ..., NaN/inf: reference 0, output 0, mismatches 0"
  std::string ToString() const;
};

// Element i of `actual` against element i of `reference`; the spans must have the same length.
ErrorStats CompareValues(std::span<const double> actual, std::span<const double> reference);

// `actual` (any type/layout) against `reference` (same dims). `actual_scale` divides actual
// first (the output scale of an FP8 output). Fails when the dims differ.
StatusOr<ErrorStats> CompareToReference(const HostTensor& actual, const HostTensor& reference,
                                        double actual_scale = 1.0);

}  // namespace fp8dot
