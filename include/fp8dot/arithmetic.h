// Small integer and statistics helpers that every layer uses: one definition each.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
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

// std::ilogb(x), read from the bits where x is a normal double (the library call costs more
// than the rest of an FP8 product's emulation or of a narrowing conversion).
inline int BinaryExponent(double x) {
  const int biased = static_cast<int>((std::bit_cast<uint64_t>(x) >> 52) & 0x7ff);
  return biased == 0 || biased == 0x7ff ? std::ilogb(x) : biased - 1023;
}

// 2^exponent (std::ldexp(1.0, exponent)), built from the bits where it is a normal double.
inline double PowerOfTwo(int exponent) {
  if (exponent < -1022 || exponent > 1023) return std::ldexp(1.0, exponent);
  return std::bit_cast<double>(static_cast<uint64_t>(exponent + 1023) << 52);
}

}  // namespace fp8dot
