#include "fp8dot/error_metrics.h"

#include <cmath>

namespace fp8dot {

StatusOr<ErrorStats> CompareToReference(const HostTensor& actual, const HostTensor& reference,
                                        double actual_scale) {
  if (actual.dims() != reference.dims()) {
    return InvalidArgument("result dims %s differ from the reference's %s",
                           DimsToString(actual.dims()).c_str(),
                           DimsToString(reference.dims()).c_str());
  }
  const HostTensor a = actual.ToRowMajor();
  const HostTensor r = reference.ToRowMajor();
  ErrorStats stats;
  stats.count = a.element_count();
  double diff_sq = 0, ref_sq = 0;
  for (int64_t i = 0; i < stats.count; ++i) {
    const double x = a.GetPhysical(i) / actual_scale;
    const double y = r.GetPhysical(i);
    if (std::isnan(x) && !std::isnan(y)) {
      ++stats.nan_count;
      continue;
    }
    const double diff = x == y ? 0.0 : std::fabs(x - y);  // equal infinities agree
    diff_sq += diff * diff;
    ref_sq += y * y;
    stats.max_abs = std::fmax(stats.max_abs, diff);
    stats.max_relative = std::fmax(stats.max_relative, diff / std::fmax(std::fabs(y), 1e-30));
  }
  stats.relative_frobenius = ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq);
  return stats;
}

}  // namespace fp8dot
