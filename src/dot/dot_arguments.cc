#include "fp8dot/dot_arguments.h"

namespace fp8dot {
namespace {

std::vector<int64_t> EffectiveLayout(const TensorSpec& spec) {
  return spec.minor_to_major.empty() ? RowMajorLayout(static_cast<int64_t>(spec.dims.size()))
                                     : spec.minor_to_major;
}

Status CheckTensor(const char* name, const TensorSpec* expected, const HostTensor* actual) {
  if (expected == nullptr && actual == nullptr) return OkStatus();
  if (expected == nullptr)
    return InvalidArgument("%s was given but the dot does not use one", name);
  if (actual == nullptr) {
    return InvalidArgument("%s is missing (expected %s)", name, expected->ToString().c_str());
  }
  if (actual->dtype() != expected->dtype || actual->dims() != expected->dims ||
      actual->minor_to_major() != EffectiveLayout(*expected)) {
    return InvalidArgument("%s is %s but the dot expects %s", name, actual->ShapeString().c_str(),
                           expected->ToString().c_str());
  }
  return OkStatus();
}

std::optional<TensorSpec> ScaleSpec(const OperandScale& scale) {
  if (scale.mode == ScaleMode::kNone) return std::nullopt;
  return TensorSpec{DType::kF32, scale.dims, scale.minor_to_major};
}

}  // namespace

DotSpec SpecFromArguments(const DotArguments& arguments, DotSpec spec) {
  if (arguments.lhs != nullptr) spec.lhs = TensorSpec::Of(*arguments.lhs);
  if (arguments.rhs != nullptr) spec.rhs = TensorSpec::Of(*arguments.rhs);
  // Scale layouts: empty (row-major) unless the tensor says otherwise, so row-major scales give
  // the same spec (and plan-cache key) as before layouts existed.
  auto scale_layout = [](const HostTensor& scale) {
    return scale.is_row_major() ? std::vector<int64_t>{} : scale.minor_to_major();
  };
  if (arguments.lhs_scale != nullptr) {
    spec.lhs_scale.dims = arguments.lhs_scale->dims();
    spec.lhs_scale.minor_to_major = scale_layout(*arguments.lhs_scale);
  }
  if (arguments.rhs_scale != nullptr) {
    spec.rhs_scale.dims = arguments.rhs_scale->dims();
    spec.rhs_scale.minor_to_major = scale_layout(*arguments.rhs_scale);
  }
  if (arguments.c != nullptr) spec.c = TensorSpec::Of(*arguments.c);
  if (arguments.bias != nullptr) spec.bias = TensorSpec::Of(*arguments.bias);
  spec.output_scale = arguments.output_scale != nullptr;
  return spec;
}

Status CheckArgumentsMatchSpec(const DotSpec& spec, const DotArguments& arguments) {
  FP8_RETURN_IF_ERROR(CheckTensor("lhs", &spec.lhs, arguments.lhs));
  FP8_RETURN_IF_ERROR(CheckTensor("rhs", &spec.rhs, arguments.rhs));
  std::optional<TensorSpec> lhs_scale = ScaleSpec(spec.lhs_scale);
  std::optional<TensorSpec> rhs_scale = ScaleSpec(spec.rhs_scale);
  FP8_RETURN_IF_ERROR(
      CheckTensor("lhs scale", lhs_scale ? &*lhs_scale : nullptr, arguments.lhs_scale));
  FP8_RETURN_IF_ERROR(
      CheckTensor("rhs scale", rhs_scale ? &*rhs_scale : nullptr, arguments.rhs_scale));
  FP8_RETURN_IF_ERROR(CheckTensor("C", spec.c ? &*spec.c : nullptr, arguments.c));
  FP8_RETURN_IF_ERROR(CheckTensor("bias", spec.bias ? &*spec.bias : nullptr, arguments.bias));
  const TensorSpec scalar{DType::kF32, {}, {}};
  if (spec.output_scale && arguments.output_scale != nullptr &&
      arguments.output_scale->element_count() == 1 &&
      arguments.output_scale->dtype() == DType::kF32) {
    return OkStatus();
  }
  return CheckTensor("output scale", spec.output_scale ? &scalar : nullptr, arguments.output_scale);
}

}  // namespace fp8dot
