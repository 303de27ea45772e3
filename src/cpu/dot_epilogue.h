// The part of a scaled dot after the products are summed, shared by every CPU path:
//   D = activation(alpha * S + beta * C + bias),  S = sum_k scale_a * scale_b * a * b
//   output = D (or saturate(D * scale_d) for FP8 outputs), amax = max |D|.
// The exact reference computes it in f64. The emulation and the BLAS path compute it as the GPU
// does, in the dot's compute type: f32 (rounded after each operation, like cuBLASLt's and the own
// kernel's f32 epilogue) unless the dot is f64. So D, and amax = max |D|, are f32 values there,
// and D reaches a 16-bit or FP8 output through f32, as on the GPU (no double-rounding mismatch).
#pragma once

#include <vector>

#include "cpu/canonical_operands.h"

namespace fp8dot::cpu {

// kExact: f64 (the reference). kComputeType: what the GPU computes (f32 unless the dot is f64).
enum class EpilogueArithmetic { kExact, kComputeType };

class DotEpilogue {
 public:
  DotEpilogue(const DotSpec& spec, const CanonicalOperands& operands, const DotArguments& arguments,
              EpilogueArithmetic arithmetic);

  // True when D = S (alpha 1, no C, no bias, no activation).
  bool is_identity() const { return identity_; }
  // D at row-major output position `index` ([batch, M, N]) given S there.
  double operator()(size_t index, double scaled_product) const;
  // `value` as the epilogue's arithmetic holds it (rounded to f32 where that is the compute type).
  double Round(double value) const {
    return round_to_f32_ ? static_cast<double>(static_cast<float>(value)) : value;
  }

 private:
  double alpha_, beta_;
  std::vector<double> c_;     // row-major, empty when absent
  std::vector<double> bias_;  // (N), empty when absent
  size_t n_;
  bool relu_, gelu_, identity_;
  bool round_to_f32_;  // kComputeType with an f32 compute type: each operation rounds to f32
};

// The exact D (f64) for every output position, from S in row-major [batch, M, N].
template <typename T>
std::vector<double> ApplyEpilogue(const DotSpec& spec, const CanonicalOperands& operands,
                                  const DotArguments& arguments, const std::vector<T>& products);

// Applies the epilogue to S and converts D to the output type (scale_d and saturation for FP8),
// with amax, in one pass.
template <typename T>
StatusOr<DotResult> MakeResult(const DotSpec& spec, const CanonicalOperands& operands,
                               const DotArguments& arguments, const std::vector<T>& products,
                               EpilogueArithmetic arithmetic);

}  // namespace fp8dot::cpu
