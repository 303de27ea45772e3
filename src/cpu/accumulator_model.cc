#include "fp8dot/accumulator_model.h"

#include <cmath>
#include <cstring>

namespace fp8dot {

Status Fp8AccumulatorModel::Validate() const {
  if (mantissa_bits < 1 || mantissa_bits > 50) {
    return InvalidArgument("accumulator mantissa_bits must be in [1, 50], got %d", mantissa_bits);
  }
  if (group_size < 1)
    return InvalidArgument("accumulator group_size must be >= 1, got %d", group_size);
  if (promotion_interval < 1 || promotion_interval % group_size != 0) {
    return InvalidArgument(
        "promotion_interval must be a positive multiple of group_size (%d), got %d", group_size,
        promotion_interval);
  }
  return OkStatus();
}

const char* AccumulatorRoundingName(AccumulatorRounding rounding) {
  return rounding == AccumulatorRounding::kTruncate ? "truncate" : "nearest";
}

StatusOr<AccumulatorRounding> ParseAccumulatorRounding(const char* text) {
  if (std::strcmp(text, "truncate") == 0) return AccumulatorRounding::kTruncate;
  if (std::strcmp(text, "nearest") == 0) return AccumulatorRounding::kNearestEven;
  return InvalidArgument("unknown accumulator rounding '%s' (expected truncate or nearest)", text);
}

double Fp8Accumulator::Cut(double value, double quantum) const {
  const double units = value / quantum;
  return (model_.rounding == AccumulatorRounding::kTruncate ? std::trunc(units)
                                                            : std::nearbyint(units)) *
         quantum;
}

void Fp8Accumulator::AddGroup(const double* products, int count) {
  // Align every term to the largest exponent among the products and the accumulator.
  double largest = std::fabs(value_);
  for (int i = 0; i < count; ++i) largest = std::fmax(largest, std::fabs(products[i]));
  if (largest == 0.0 || !std::isfinite(largest)) {
    double sum = value_;
    for (int i = 0; i < count; ++i) sum += products[i];
    value_ = sum;  // zeros, or inf/NaN which propagate as in hardware
    return;
  }
  const double aligned_quantum = std::ldexp(1.0, std::ilogb(largest) - model_.mantissa_bits);
  double sum = Cut(value_, aligned_quantum);
  for (int i = 0; i < count; ++i) sum += Cut(products[i], aligned_quantum);
  // Normalise: keep mantissa_bits fraction bits at the sum's own exponent.
  if (sum == 0.0) {
    value_ = 0.0;
    return;
  }
  value_ = Cut(sum, std::ldexp(1.0, std::ilogb(sum) - model_.mantissa_bits));
}

}  // namespace fp8dot
