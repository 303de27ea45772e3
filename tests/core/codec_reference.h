// An independent, obviously-correct reference for narrowing conversions: list every finite value
// of the type, find the two neighbours of x by binary search, take the nearer, break ties toward
// the even code. One virtual value past the largest finite one stands for "overflow".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fp8dot/float_codec.h"

namespace fp8dot::testing {

class CodecReference {
 public:
  // decode: code -> value; codes: how many codes; the virtual overflow value and its code.
  template <typename Decode>
  CodecReference(Decode decode, uint32_t code_count, uint32_t sign_bit, double overflow_value,
                 uint32_t overflow_code, uint32_t overflow_result)
      : sign_bit_(sign_bit), overflow_result_(overflow_result) {
    for (uint32_t code = 0; code < code_count; ++code) {
      double value = decode(code);
      if ((code & sign_bit) == 0 && std::isfinite(value)) grid_.push_back({value, code});
    }
    grid_.push_back({overflow_value, overflow_code});
    std::sort(grid_.begin(), grid_.end(),
              [](const Entry& a, const Entry& b) { return a.value < b.value; });
  }

  // The expected code for x (NaN inputs are not handled here).
  uint32_t Encode(double x) const {
    const uint32_t sign = std::signbit(x) ? sign_bit_ : 0;
    const double a = std::fabs(x);
    if (std::isinf(a)) return sign | overflow_result_;
    auto upper = std::lower_bound(grid_.begin(), grid_.end(), a,
                                  [](const Entry& e, double v) { return e.value < v; });
    const Entry* chosen;
    if (upper == grid_.end()) {
      chosen = &grid_.back();
    } else if (upper->value == a || upper == grid_.begin()) {
      chosen = &*upper;
    } else {
      const Entry& lower = *(upper - 1);
      const double down = a - lower.value, up = upper->value - a;
      if (down < up)
        chosen = &lower;
      else if (up < down)
        chosen = &*upper;
      else
        chosen = (lower.code & 1) == 0 ? &lower : &*upper;
    }
    if (chosen == &grid_.back()) return sign | overflow_result_;
    return sign | chosen->code;
  }

  // Midpoints between neighbours (where rounding decisions happen).
  std::vector<double> Midpoints() const {
    std::vector<double> out;
    for (size_t i = 0; i + 1 < grid_.size(); ++i)
      out.push_back((grid_[i].value + grid_[i + 1].value) / 2);
    return out;
  }
  std::vector<double> Values() const {
    std::vector<double> out;
    for (size_t i = 0; i + 1 < grid_.size(); ++i) out.push_back(grid_[i].value);
    return out;
  }

 private:
  struct Entry {
    double value;
    uint32_t code;
  };
  std::vector<Entry> grid_;
  uint32_t sign_bit_;
  uint32_t overflow_result_;
};

// e4m3fn: past 448 comes 480 (S.1111.111, odd), which is NaN. e5m2: past 57344 comes 65536
// (S.11111.00, even), which is inf. f16: 65536 -> inf. bf16: 2^128 -> inf.
inline CodecReference E4M3Reference() {
  return CodecReference([](uint32_t c) { return DecodeF8E4M3FN(static_cast<uint8_t>(c)); }, 256,
                        0x80, 480.0, 0x7F, 0x7F);
}
inline CodecReference E5M2Reference() {
  return CodecReference([](uint32_t c) { return DecodeF8E5M2(static_cast<uint8_t>(c)); }, 256, 0x80,
                        65536.0, 0x7C, 0x7C);
}
inline CodecReference F16Reference() {
  return CodecReference([](uint32_t c) { return DecodeF16(static_cast<uint16_t>(c)); }, 65536,
                        0x8000, 65536.0, 0x7C00, 0x7C00);
}
inline CodecReference BF16Reference() {
  return CodecReference([](uint32_t c) { return DecodeBF16(static_cast<uint16_t>(c)); }, 65536,
                        0x8000, std::ldexp(1.0, 128), 0x7F80, 0x7F80);
}

}  // namespace fp8dot::testing
