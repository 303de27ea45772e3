#include "fp8dot/accumulator_model.h"

#include <algorithm>
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
  if (split.slices < 1) return InvalidArgument("split-K slices must be >= 1, got %d", split.slices);
  if (split.slices > 1 && (split.tile < 1 || split.tile % promotion_interval != 0)) {
    return InvalidArgument(
        "split-K tile must be a positive multiple of promotion_interval (%d), got %d",
        promotion_interval, split.tile);
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

int ProductAlignmentExponent(double a, int a_min_exponent, double b, int b_min_exponent,
                             ProductAlignment alignment) {
  if (alignment == ProductAlignment::kProductValue) return std::ilogb(a * b);
  return std::max(std::ilogb(a), a_min_exponent) + std::max(std::ilogb(b), b_min_exponent);
}

void Fp8Accumulator::AddGroup(const double* products, const int* exponents, int count) {
  // Align every term to the largest exponent among the products and the accumulator.
  bool any_term = value_ != 0.0;
  bool all_finite = std::isfinite(value_);
  int largest = any_term ? std::ilogb(value_) : 0;
  for (int i = 0; i < count; ++i) {
    if (products[i] == 0.0) continue;
    all_finite = all_finite && std::isfinite(products[i]);
    largest = any_term ? std::max(largest, exponents[i]) : exponents[i];
    any_term = true;
  }
  if (!any_term || !all_finite) {
    double sum = value_;
    for (int i = 0; i < count; ++i) sum += products[i];
    value_ = sum;  // zeros, or inf/NaN which propagate as in hardware
    return;
  }
  const double aligned_quantum = std::ldexp(1.0, largest - model_.mantissa_bits);
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
