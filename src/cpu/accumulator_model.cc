#include "fp8dot/accumulator_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

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

double Fp8Accumulator::Cut(double value, int quantum_exponent) const {
  // value * 2^-e and value / 2^e are the same real number, so both round to the same double;
  // the multiplication is the faster. Where 2^-e is no double, divide.
  const double units = quantum_exponent >= -1022 && quantum_exponent <= 1022
                           ? value * PowerOfTwo(-quantum_exponent)
                           : value / PowerOfTwo(quantum_exponent);
  return (model_.rounding == AccumulatorRounding::kTruncate ? std::trunc(units)
                                                            : std::nearbyint(units)) *
         PowerOfTwo(quantum_exponent);
}

void Fp8Accumulator::AddGroup(const double* products, const int* exponents, int count) {
  // Align every term to the largest exponent among the products and the accumulator.
  // Branch-free (the emulation's inner loop): x * 0 is NaN exactly when x is inf or NaN, and
  // zeros take part in the maximum as the lowest int.
  constexpr int kNoTerm = std::numeric_limits<int>::min();
  double non_finite = value_ * 0.0;
  int largest = value_ != 0.0 ? BinaryExponent(value_) : kNoTerm;
  for (int i = 0; i < count; ++i) {
    non_finite += products[i] * 0.0;
    largest = std::max(largest, products[i] != 0.0 ? exponents[i] : kNoTerm);
  }
  if (largest == kNoTerm || std::isnan(non_finite)) {
    double sum = value_;
    for (int i = 0; i < count; ++i) sum += products[i];
    value_ = sum;  // zeros, or inf/NaN which propagate as in hardware
    return;
  }
  const int aligned_quantum = largest - model_.mantissa_bits;  // its exponent
  if (model_.rounding == AccumulatorRounding::kTruncate &&
      AddTruncatedInQuanta(products, count, aligned_quantum)) {
    return;
  }
  double sum = Cut(value_, aligned_quantum);
  for (int i = 0; i < count; ++i) sum += Cut(products[i], aligned_quantum);
  // Normalise: keep mantissa_bits fraction bits at the sum's own exponent.
  if (sum == 0.0) {
    value_ = 0.0;
    return;
  }
  value_ = Cut(sum, BinaryExponent(sum) - model_.mantissa_bits);
}

// Truncation counted in quanta: a term cut to a multiple of the quantum 2^q is an integer number
// of quanta, below 2^(mantissa_bits + 2) in magnitude (no term's alignment exponent exceeds the
// largest, and significands of products are below 4), so the cut terms and their sum are exact
// int64 values, as they are exact doubles in the sum above: the same result, with the conversion
// to an integer (which truncates) in place of a floating-point truncation per term. False (and
// nothing added) where that does not hold: a sum that could reach 2^53, 2^±q beyond the normal
// doubles, or a term past the bound (an exponent that is not its product's).
bool Fp8Accumulator::AddTruncatedInQuanta(const double* products, int count, int quantum_exponent) {
  const int term_bits = model_.mantissa_bits + 2;
  if (term_bits + std::bit_width(static_cast<unsigned>(count) + 1u) > 53 ||
      quantum_exponent < -1000 || quantum_exponent > 1000) {
    return false;
  }
  const double per_quantum = PowerOfTwo(-quantum_exponent);
  const double term_limit = PowerOfTwo(term_bits);
  const double current = value_ * per_quantum;
  bool in_bounds = std::fabs(current) < term_limit;
  int64_t quanta = in_bounds ? static_cast<int64_t>(current) : 0;
  for (int i = 0; i < count; ++i) {
    const double term = products[i] * per_quantum;
    in_bounds = in_bounds && std::fabs(term) < term_limit;
    quanta += static_cast<int64_t>(in_bounds ? term : 0.0);
  }
  if (!in_bounds) return false;
  if (quanta == 0) {
    value_ = 0.0;
    return true;
  }
  // Normalise: keep mantissa_bits fraction bits, cutting |quanta| toward zero.
  uint64_t magnitude =
      quanta < 0 ? 0 - static_cast<uint64_t>(quanta) : static_cast<uint64_t>(quanta);
  const int dropped_bits = std::bit_width(magnitude) - 1 - model_.mantissa_bits;
  if (dropped_bits > 0) magnitude = magnitude >> dropped_bits << dropped_bits;
  const double cut = static_cast<double>(magnitude) * PowerOfTwo(quantum_exponent);
  value_ = quanta < 0 ? -cut : cut;
  return true;
}

}  // namespace fp8dot
