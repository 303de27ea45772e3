// A model of Hopper's FP8 tensor-core accumulator, used by the CPU emulation.
//
// Products of FP8 values are exact. The tensor core adds them `group_size` at a time (one wgmma
// K-step, 32 for FP8) together with the running accumulator: every term is aligned to the largest
// exponent among them and cut to `mantissa_bits` fraction bits, the aligned terms are summed, and
// the sum is normalised and cut again to `mantissa_bits` fraction bits. A product's exponent for
// the alignment is the sum of its operands' exponents, not its own (which is one higher when the
// significands multiply to 2 or more). In fast mode that accumulator runs over the whole K (or
// each run of the kernel's split of K); in promoted mode it is added into an FP32 register and
// cleared every `promotion_interval` K-elements. docs/accumulation-model.md has the derivation
// and the calibration against the H200.
#pragma once

#include <algorithm>

#include "fp8dot/arithmetic.h"
#include "fp8dot/k_split.h"
#include "fp8dot/status.h"

namespace fp8dot {

enum class AccumulatorRounding {
  kTruncate,  // toward zero: what the calibration against the H200 measurements supports
  kNearestEven,
};

// The exponent a product a*b is aligned by.
enum class ProductAlignment {
  kOperandExponents,  // e(a) + e(b), subnormals at their type's minimum: the H200 (bit-exact)
  kProductValue,      // the product's own exponent (the textbook model; kept for comparison)
};

struct Fp8AccumulatorModel {
  int mantissa_bits = 13;  // fraction bits kept (precision = mantissa_bits + 1 bits)
  AccumulatorRounding rounding = AccumulatorRounding::kTruncate;
  int group_size = 32;           // products added per accumulator update
  int promotion_interval = 128;  // promoted mode: K-elements between FP32 promotions
  ProductAlignment alignment = ProductAlignment::kOperandExponents;
  KSplit split;  // the kernel's split of K (not a property of the tensor core)
  // How a block-scaled promotion adds a partial sum p into the f32 register r, with the scale
  // product s = f32(scale_a * scale_b): false, r + f32(p * s) (two roundings: cuBLASLt); true,
  // fma(p, s, r) (one rounding: fp8dot's own kernel). A property of the kernel, like split.
  bool fused_promotion = false;

  // mantissa_bits in [1, 50], group_size >= 1, promotion_interval a positive multiple of
  // group_size, split.slices >= 1 and, when it is > 1, split.tile a positive multiple of
  // promotion_interval.
  Status Validate() const;
};

const char* AccumulatorRoundingName(AccumulatorRounding rounding);  // "truncate", "nearest"
StatusOr<AccumulatorRounding> ParseAccumulatorRounding(const char* text);

// An operand's share of a product's alignment exponent under kOperandExponents: e(x), or its
// type's smallest normal exponent for a subnormal x (nonzero, finite).
inline int OperandAlignmentExponent(double x, int min_exponent) {
  return std::max(BinaryExponent(x), min_exponent);
}

// The alignment exponent of the product a*b (a, b nonzero finite values of types whose smallest
// normal exponents are a_min_exponent and b_min_exponent).
inline int ProductAlignmentExponent(double a, int a_min_exponent, double b, int b_min_exponent,
                                    ProductAlignment alignment) {
  if (alignment == ProductAlignment::kProductValue) return BinaryExponent(a * b);
  return OperandAlignmentExponent(a, a_min_exponent) + OperandAlignmentExponent(b, b_min_exponent);
}

// The limited-precision accumulator of one output element.
class Fp8Accumulator {
 public:
  explicit Fp8Accumulator(const Fp8AccumulatorModel& model) : model_(model) {}

  // Adds `count` (<= group_size) exact products as one tensor-core step; `exponents[i]` is
  // products[i]'s ProductAlignmentExponent (ignored where the product is zero).
  void AddGroup(const double* products, const int* exponents, int count);
  double value() const { return value_; }
  void Reset() { value_ = 0.0; }

 private:
  // value cut to a multiple of 2^quantum_exponent (by model_.rounding).
  double Cut(double value, int quantum_exponent) const;
  // AddGroup's cut and sum with truncation, counted in integer quanta; false where it cannot.
  bool AddTruncatedInQuanta(const double* products, int count, int quantum_exponent);

  Fp8AccumulatorModel model_;
  double value_ = 0.0;
};

}  // namespace fp8dot
