#include "fp8dot/dot_problem.h"

#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdint>

namespace fp8dot {
namespace {

const HostTensor* Pointer(const std::optional<HostTensor>& tensor) {
  return tensor.has_value() ? &*tensor : nullptr;
}

// ---- The memory budget ------------------------------------------------------------------------

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

// Bytes of a `type` tensor of `dims`, saturating at INT64_MAX.
int64_t TensorBytes(DType type, const Dims& dims) {
  int64_t bytes = DTypeSizeInBytes(type);
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(bytes, d, &bytes)) return INT64_MAX;
  }
  return bytes;
}

// Every tensor the problem will hold, counted before any is allocated or filled: the operands,
// their scales, C, the bias, the output and the f64 reference it is compared with.
Status CheckMemoryBudget(const DotProblemOptions& options, const Dims& lhs_dims,
                         const Dims& rhs_dims) {
  DotSpec spec;
  spec.lhs = {options.lhs ? options.lhs->dtype() : options.lhs_type, lhs_dims, {}};
  spec.rhs = {options.rhs ? options.rhs->dtype() : options.rhs_type, rhs_dims, {}};
  spec.dimension_numbers = options.dimension_numbers.value_or(
      DotDimensionNumbers::Matmul(options.batch > 0 || lhs_dims.size() == 3));
  spec.precision_config = options.precision_config;
  spec.output_type = options.output_type;
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(spec));
  const DType aux_type = IsFp8(options.output_type) ? DType::kBF16 : options.output_type;
  const int64_t operands =
      SaturatingAdd(TensorBytes(spec.lhs.dtype, lhs_dims), TensorBytes(spec.rhs.dtype, rhs_dims));
  int64_t scales = 0;
  for (bool is_lhs : {true, false}) {
    const ScaleMode mode = is_lhs ? options.lhs_scale_mode : options.rhs_scale_mode;
    const std::optional<HostTensor>& given = is_lhs ? options.lhs_scale : options.rhs_scale;
    if (given.has_value()) {
      scales = SaturatingAdd(scales, given->size_in_bytes());
    } else if (mode != ScaleMode::kNone) {
      scales =
          SaturatingAdd(scales, TensorBytes(DType::kF32, ExpectedScaleDims(mode, is_lhs, dot)));
    }
  }
  const int64_t c = options.beta != 0.0 ? TensorBytes(aux_type, dot.output_dims) : 0;
  Dims bias_dims;
  for (int64_t d : dot.rhs_free_dimensions) bias_dims.push_back(rhs_dims[static_cast<size_t>(d)]);
  const int64_t bias = EpilogueHasBias(options.epilogue) ? TensorBytes(aux_type, bias_dims) : 0;
  const int64_t output = TensorBytes(options.output_type, dot.output_dims);
  const int64_t reference = TensorBytes(DType::kF64, dot.output_dims);
  int64_t total = 0;
  for (int64_t part : {operands, scales, c, bias, output, reference}) {
    total = SaturatingAdd(total, part);
  }
  const int64_t limit = options.memory_limit_bytes.value_or(DefaultMemoryLimitBytes());
  if (total <= limit) return OkStatus();
  return ResourceExhausted(
      "dot problem %s x %s -> %s%s needs %lld bytes (operands %lld, scales %lld, C %lld, bias "
      "%lld, output %lld, f64 reference %lld), more than the memory limit of %lld bytes",
      spec.lhs.ToString().c_str(), spec.rhs.ToString().c_str(), DTypeName(options.output_type),
      DimsToString(dot.output_dims).c_str(), static_cast<long long>(total),
      static_cast<long long>(operands), static_cast<long long>(scales), static_cast<long long>(c),
      static_cast<long long>(bias), static_cast<long long>(output),
      static_cast<long long>(reference), static_cast<long long>(limit));
}

}  // namespace

int64_t DefaultMemoryLimitBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return INT64_MAX;
  return static_cast<int64_t>(pages) / 2 * page_size;
}

DotArguments DotProblem::arguments() const {
  return {&lhs,       &rhs,          Pointer(lhs_scale),   Pointer(rhs_scale),
          Pointer(c), Pointer(bias), Pointer(output_scale)};
}

StatusOr<DotProblem> MakeDotProblem(DotProblemOptions options) {
  if (options.output_scale.has_value() &&
      !(std::isfinite(*options.output_scale) && *options.output_scale > 0)) {
    // D is divided by it: 0, inf and NaN give zeros or NaNs, a negative one flips the sign.
    return InvalidArgument("dot problem: output scale must be finite and > 0, got %g",
                           *options.output_scale);
  }
  DotProblem problem;
  DotSpec& spec = problem.spec;
  uint64_t seed = options.seed;
  auto given_or_random = [&](std::optional<HostTensor>& given, DType type,
                             Dims dims) -> StatusOr<HostTensor> {
    ++seed;  // the same seed gives the same tensors whichever ones were given
    if (given.has_value()) return std::move(*given);
    return RandomTensor(type, dims, options.distribution, seed);
  };
  const bool batched = options.batch > 0;
  Dims lhs_dims = {options.m, options.k}, rhs_dims = {options.k, options.n};
  if (batched) {
    lhs_dims.insert(lhs_dims.begin(), options.batch);
    rhs_dims.insert(rhs_dims.begin(), options.batch);
  }
  if (options.lhs.has_value()) lhs_dims = options.lhs->dims();
  if (options.rhs.has_value()) rhs_dims = options.rhs->dims();
  FP8_RETURN_IF_ERROR(CheckMemoryBudget(options, lhs_dims, rhs_dims));
  const bool lhs_given = options.lhs.has_value();
  FP8_ASSIGN_OR_RETURN(problem.lhs, given_or_random(options.lhs, options.lhs_type, lhs_dims));
  FP8_ASSIGN_OR_RETURN(problem.rhs, given_or_random(options.rhs, options.rhs_type, rhs_dims));
  spec.lhs = TensorSpec::Of(problem.lhs);
  spec.rhs = TensorSpec::Of(problem.rhs);
  spec.dimension_numbers = options.dimension_numbers.value_or(
      DotDimensionNumbers::Matmul(batched || (lhs_given && problem.lhs.rank() == 3)));
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

  auto make_scale = [&](ScaleMode mode, bool is_lhs, std::optional<HostTensor>& given,
                        OperandScale& scale, std::optional<HostTensor>& tensor) -> Status {
    ++seed;
    scale.mode = mode;
    if (given.has_value()) {
      tensor = std::move(*given);
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
