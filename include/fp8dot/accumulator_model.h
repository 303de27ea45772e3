// A model of Hopper's FP8 tensor-core accumulator, used by the CPU emulation.
//
// Products of FP8 values are exact. The tensor core adds them `group_size` at a time (one wgmma
// K-step, 32 for FP8) together with the running accumulator: every term is aligned to the largest
// exponent among them and cut to `mantissa_bits` fraction bits, the aligned terms are summed, and
// the sum is normalised and cut again to `mantissa_bits` fraction bits. In fast mode that
// accumulator runs over the whole K; in promoted mode it is added into an FP32 register and
// cleared every `promotion_interval` K-elements. docs/accumulation-model.md has the derivation and
// the calibration of the defaults against the H200 measurements in FACTS.md.
#pragma once

#include "fp8dot/status.h"

namespace fp8dot {

enum class AccumulatorRounding {
  kTruncate,  // toward zero: what the calibration against the H200 measurements supports
  kNearestEven,
};

struct Fp8AccumulatorModel {
  int mantissa_bits = 13;  // fraction bits kept (precision = mantissa_bits + 1 bits)
  AccumulatorRounding rounding = AccumulatorRounding::kTruncate;
  int group_size = 32;           // products added per accumulator update
  int promotion_interval = 128;  // promoted mode: K-elements between FP32 promotions

  // mantissa_bits in [1, 50], group_size >= 1, promotion_interval a positive multiple of
  // group_size.
  Status Validate() const;
};

const char* AccumulatorRoundingName(AccumulatorRounding rounding);  // "truncate", "nearest"
StatusOr<AccumulatorRounding> ParseAccumulatorRounding(const char* text);

// The limited-precision accumulator of one output element.
class Fp8Accumulator {
 public:
  explicit Fp8Accumulator(const Fp8AccumulatorModel& model) : model_(model) {}

  // Adds `count` (<= group_size) exact products as one tensor-core step.
  void AddGroup(const double* products, int count);
  double value() const { return value_; }
  void Reset() { value_ = 0.0; }

 private:
  double Cut(double value, double quantum) const;

  Fp8AccumulatorModel model_;
  double value_ = 0.0;
};

}  // namespace fp8dot
