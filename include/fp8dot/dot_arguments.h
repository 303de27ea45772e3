// The data of one scaled dot on the host, and what a backend returns.
#pragma once

#include <optional>

#include "fp8dot/dot_spec.h"
#include "fp8dot/tensor.h"

namespace fp8dot {

// Non-owning. Null means "not given"; each must match the DotSpec it is run with.
struct DotArguments {
  const HostTensor* lhs = nullptr;
  const HostTensor* rhs = nullptr;
  const HostTensor* lhs_scale = nullptr;     // f32, when spec.lhs_scale.mode != kNone
  const HostTensor* rhs_scale = nullptr;     // f32, when spec.rhs_scale.mode != kNone
  const HostTensor* c = nullptr;             // when spec.c
  const HostTensor* bias = nullptr;          // when spec.bias
  const HostTensor* output_scale = nullptr;  // f32 scalar, when spec.output_scale
};

struct DotResult {
  HostTensor output;           // spec.output_type, dims CanonicalDot::output_dims, row-major
  std::optional<double> amax;  // max |D| before the output scale, when spec.compute_amax
  AccumulationMode accumulation = AccumulationMode::kF32;
};

// Builds the DotSpec fields that describe the data (operand, scale, C and bias specs) from
// `arguments`; the caller sets precision, output type, epilogue and the rest.
DotSpec SpecFromArguments(const DotArguments& arguments, DotSpec spec);

// Checks that each tensor in `arguments` is present exactly when `spec` needs it and has the
// type, dims and layout the spec says.
Status CheckArgumentsMatchSpec(const DotSpec& spec, const DotArguments& arguments);

}  // namespace fp8dot
