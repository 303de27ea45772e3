#include "fp8dot/error_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace fp8dot {

ErrorStats CompareValues(std::span<const double> actual, std::span<const double> reference) {
  ErrorStats stats;
  stats.count = static_cast<int64_t>(std::min(actual.size(), reference.size()));
  double diff_squares = 0, reference_squares = 0, max_reference = 0;
  for (int64_t i = 0; i < stats.count; ++i) {
    const double a = actual[static_cast<size_t>(i)], r = reference[static_cast<size_t>(i)];
    if (!std::isfinite(a) || !std::isfinite(r)) {
      stats.nonfinite_reference += !std::isfinite(r);
      stats.nonfinite_actual += !std::isfinite(a);
      const bool same = (std::isnan(a) && std::isnan(r)) || a == r;
      if (!same) ++stats.nonfinite_mismatches;
      continue;
    }
    const double diff = std::fabs(a - r);
    stats.max_abs = std::fmax(stats.max_abs, diff);
    max_reference = std::fmax(max_reference, std::fabs(r));
    diff_squares += diff * diff;
    reference_squares += r * r;
  }
  stats.relative_frobenius =
      reference_squares > 0 ? std::sqrt(diff_squares / reference_squares) : std::sqrt(diff_squares);
  stats.max_relative = max_reference > 0 ? stats.max_abs / max_reference : stats.max_abs;
  return stats;
}

std::string ErrorStats::ToString() const {
  char text[320];
  std::snprintf(text, sizeof(text),
                "relative Frobenius %.3e, max abs %.3e, max abs / max |reference| %.3e; NaN/inf "
                "elements: reference %lld, output %lld, mismatches %lld (of %lld)",
                relative_frobenius, max_abs, max_relative,
                static_cast<long long>(nonfinite_reference),
                static_cast<long long>(nonfinite_actual),
                static_cast<long long>(nonfinite_mismatches), static_cast<long long>(count));
  return text;
}

StatusOr<ErrorStats> CompareToReference(const HostTensor& actual, const HostTensor& reference,
                                        double actual_scale) {
  if (actual.dims() != reference.dims()) {
    return InvalidArgument("result dims %s differ from the reference's %s",
                           DimsToString(actual.dims()).c_str(),
                           DimsToString(reference.dims()).c_str());
  }
  const HostTensor a = actual.ToRowMajor();
  const HostTensor r = reference.ToRowMajor();
  std::vector<double> actual_values(static_cast<size_t>(a.element_count()));
  std::vector<double> reference_values(actual_values.size());
  for (size_t i = 0; i < actual_values.size(); ++i) {
    actual_values[i] = a.GetPhysical(static_cast<int64_t>(i)) / actual_scale;
    reference_values[i] = r.GetPhysical(static_cast<int64_t>(i));
  }
  return CompareValues(actual_values, reference_values);
}

}  // namespace fp8dot
