// The part of a scaled dot after the products are summed, shared by every CPU path:
//   D = activation(alpha * S + beta * C + bias),  S = sum_k scale_a * scale_b * a * b
//   output = D (or saturate(D * scale_d) for FP8 outputs), amax = max |D|.
// Computed in f64; the rounding that matters (accumulation, output type) happens elsewhere.
#pragma once

#include <vector>

#include "cpu/canonical_operands.h"

namespace fp8dot::cpu {

class DotEpilogue {
 public:
  DotEpilogue(const DotSpec& spec, const CanonicalOperands& operands,
              const DotArguments& arguments);

  // True when D = S (alpha 1, no C, no bias, no activation).
  bool is_identity() const { return identity_; }
  // D at row-major output position `index` ([batch, M, N]) given S there.
  double operator()(size_t index, double scaled_product) const;

 private:
  double alpha_, beta_;
  std::vector<double> c_;     // row-major, empty when absent
  std::vector<double> bias_;  // (N), empty when absent
  size_t n_;
  bool relu_, gelu_, identity_;
};

// D for every output position (f64), from S in row-major [batch, M, N].
template <typename T>
std::vector<double> ApplyEpilogue(const DotSpec& spec, const CanonicalOperands& operands,
                                  const DotArguments& arguments, const std::vector<T>& products);

// Applies the epilogue to S and converts D to the output type (scale_d and saturation for FP8),
// with amax, in one pass.
template <typename T>
StatusOr<DotResult> MakeResult(const DotSpec& spec, const CanonicalOperands& operands,
                               const DotArguments& arguments, const std::vector<T>& products);

}  // namespace fp8dot::cpu
