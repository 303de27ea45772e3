// What a framework binding knows about one quantisation — the input's spec and the options by
// name — and the one function that turns it into a validated QuantizeSpec. The nanobind module
// and the torch op both call it, so a quantisation is checked the same way whichever way it
// arrives.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "fp8dot/dot_spec.h"
#include "fp8dot/dtype.h"
#include "fp8dot/quantize.h"
#include "fp8dot/status.h"

namespace fp8dot {

struct QuantizeRequest {
  TensorSpec input;  // a row-major matrix (any layout of one row or column)
  DType output_type = DType::kF8E4M3FN;
  std::string granularity;  // "tensor", "row", "1x128" or "128x128"
  bool row_major = true;
  bool transposed = false;
  bool given_scale = false;
  int margin = 0;
  bool compute_amax = false;
  std::string scale_layout = "row-major";  // of 1x128 scales: "row-major" or "column-major"
  // The activation quantised instead of the input ("none", "swiglu", "gelu"); empty: "swiglu"
  // when `up` is given, else "none".
  std::string activation;
  // The swiglu activation's second input (QuantizeActivation::kSwiGlu: SiLU(input) · up is
  // quantised): the input's shape, dtype and layout.
  std::optional<TensorSpec> up;
};

// The request as a QuantizeSpec with the outputs ValidateQuantizeSpec says it produces, or
// INVALID_ARGUMENT naming what is wrong ("quantize input: ... is not row-major").
StatusOr<std::pair<QuantizeSpec, QuantizeOutputs>> MakeQuantizeSpec(const QuantizeRequest& request);

}  // namespace fp8dot
