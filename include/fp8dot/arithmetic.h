// Small integer and statistics helpers that every layer uses: one definition each.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fp8dot {

// The smallest multiple of `multiple` (> 0) that is >= value (>= 0).
constexpr int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The upper median (the middle element after sorting; for an even count, the higher of the two).
// `values` must not be empty.
inline double Median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2),
                   values.end());
  return values[values.size() / 2];
}

}  // namespace fp8dot
