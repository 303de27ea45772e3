// What a framework binding knows about one scaled dot — operand specs, names of precisions,
// modes and types — and the one function that turns it into a validated DotSpec. The nanobind
// module (numpy, torch, JAX at trace time) and the XLA FFI handlers (JAX at run time) both call
// MakeDotSpec, so a dot traced in JAX and the same dot run by the FFI handler are one DotSpec
// with one plan-cache key, whichever way it arrives.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "fp8dot/dot_spec.h"
#include "fp8dot/status.h"

namespace fp8dot {

struct DotRequest {
  TensorSpec lhs;
  TensorSpec rhs;
  // Unset: [M,K] x [K,N], or [B,M,K] x [B,K,N] for two rank-3 operands.
  std::optional<DotDimensionNumbers> dimension_numbers;
  std::array<std::string, 2> precision = {"DEFAULT", "DEFAULT"};
  std::string algorithm;  // "" = none
  DType output_type = DType::kF32;
  std::optional<TensorSpec> lhs_scale;  // float32
  std::optional<TensorSpec> rhs_scale;
  std::string lhs_scale_mode;  // "" = read off the scale's shape (InferScaleMode)
  std::string rhs_scale_mode;
  std::optional<TensorSpec> bias;
  std::optional<TensorSpec> c;
  std::string epilogue;  // "" = BIAS when a bias is given, else DEFAULT
  double alpha = 1.0;
  double beta = 0.0;
  bool output_scale = false;
  bool compute_amax = false;
};

// The request as a DotSpec that ValidateDotSpec accepts, or INVALID_ARGUMENT naming the part of
// the request that is wrong ("lhs_scale must be float32, got bfloat16").
StatusOr<DotSpec> MakeDotSpec(const DotRequest& request);

// numpy/ml_dtypes, torch and JAX name types differently from HLO: "float8_e4m3fn" (also
// "torch.float8_e4m3fn") vs "f8e4m3fn". Both spellings are accepted.
StatusOr<DType> DTypeFromFrameworkName(std::string name);
// "float8_e4m3fn", "bfloat16", ...: the name numpy, torch and JAX share.
const char* FrameworkDTypeName(DType dtype);

}  // namespace fp8dot
