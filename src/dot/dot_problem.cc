#include "fp8dot/dot_problem.h"

#include <cmath>

namespace fp8dot {
namespace {

const HostTensor* Pointer(const std::optional<HostTensor>& tensor) {
  return tensor.has_value() ? &*tensor : nullptr;
}

}  // namespace

DotArguments DotProblem::arguments() const {
  return {&lhs,       &rhs,          Pointer(lhs_scale),   Pointer(rhs_scale),
          Pointer(c), Pointer(bias), Pointer(output_scale)};
}

StatusOr<DotProblem> MakeDotProblem(const DotProblemOptions& options) {
  if (options.output_scale.has_value() &&
      !(std::isfinite(*options.output_scale) && *options.output_scale > 0)) {
    // D is divided by it: 0, inf and NaN give zeros or NaNs, a negative one flips the sign.
    return InvalidArgument("dot problem: output scale must be finite and > 0, got %g",
                           *options.output_scale);
  }
  DotProblem problem;
  DotSpec& spec = problem.spec;
  uint64_t seed = options.seed;
  auto given_or_random = [&](const std::optional<HostTensor>& given, DType type,
                             Dims dims) -> StatusOr<HostTensor> {
    ++seed;  // the same seed gives the same tensors whichever ones were given
    if (given.has_value()) return *given;
    return RandomTensor(type, dims, options.distribution, seed);
  };
  const bool batched = options.batch > 0;
  Dims lhs_dims = {options.m, options.k}, rhs_dims = {options.k, options.n};
  if (batched) {
    lhs_dims.insert(lhs_dims.begin(), options.batch);
    rhs_dims.insert(rhs_dims.begin(), options.batch);
  }
  FP8_ASSIGN_OR_RETURN(problem.lhs, given_or_random(options.lhs, options.lhs_type, lhs_dims));
  FP8_ASSIGN_OR_RETURN(problem.rhs, given_or_random(options.rhs, options.rhs_type, rhs_dims));
  spec.lhs = TensorSpec::Of(problem.lhs);
  spec.rhs = TensorSpec::Of(problem.rhs);
  spec.dimension_numbers = options.dimension_numbers.value_or(
      DotDimensionNumbers::Matmul(batched || (options.lhs.has_value() && problem.lhs.rank() == 3)));
  spec.precision_config = options.precision_config;
  spec.output_type = options.output_type;
  spec.epilogue = options.epilogue;
  spec.alpha = options.alpha;
  spec.beta = options.beta;
  spec.compute_amax = options.compute_amax;

  // Scale, C and bias shapes come from the canonical problem: validate the operands alone first.
  DotSpec operands_only = spec;
  operands_only.beta = 0.0;
  operands_only.epilogue = Epilogue::kDefault;
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(operands_only));
  const DType aux_type = IsFp8(options.output_type) ? DType::kBF16 : options.output_type;

  auto make_scale = [&](ScaleMode mode, bool is_lhs, const std::optional<HostTensor>& given,
                        OperandScale& scale, std::optional<HostTensor>& tensor) -> Status {
    ++seed;
    scale.mode = mode;
    if (given.has_value()) {
      tensor = *given;
    } else if (mode != ScaleMode::kNone) {
      FP8_ASSIGN_OR_RETURN(tensor, UniformTensor(DType::kF32, ExpectedScaleDims(mode, is_lhs, dot),
                                                 0.25, 4.0, seed));
    }
    if (tensor.has_value()) {
      scale.dims = tensor->dims();
      scale.minor_to_major =
          tensor->is_row_major() ? std::vector<int64_t>{} : tensor->minor_to_major();
    }
    return OkStatus();
  };
  FP8_RETURN_IF_ERROR(make_scale(options.lhs_scale_mode, true, options.lhs_scale, spec.lhs_scale,
                                 problem.lhs_scale));
  FP8_RETURN_IF_ERROR(make_scale(options.rhs_scale_mode, false, options.rhs_scale, spec.rhs_scale,
                                 problem.rhs_scale));
  if (options.beta != 0.0) {
    FP8_ASSIGN_OR_RETURN(problem.c,
                         RandomTensor(aux_type, dot.output_dims, Distribution::kSymmetric, ++seed));
    spec.c = TensorSpec::Of(*problem.c);
  }
  if (EpilogueHasBias(options.epilogue)) {
    Dims bias_dims;
    for (int64_t d : dot.rhs_free_dimensions) bias_dims.push_back(problem.rhs.dim(d));
    FP8_ASSIGN_OR_RETURN(problem.bias,
                         RandomTensor(aux_type, bias_dims, Distribution::kSymmetric, ++seed));
    spec.bias = TensorSpec::Of(*problem.bias);
  }
  if (options.output_scale.has_value()) {
    spec.output_scale = true;
    problem.output_scale = HostTensor::Scalar(DType::kF32, *options.output_scale);
  }
  FP8_RETURN_IF_ERROR(ValidateDotSpec(spec).status());
  return problem;
}

}  // namespace fp8dot
