// Framework pointers as host views or CUDA plan buffers.
#include "bindings/dot_pointers.h"

#include <cstring>

namespace fp8dot {
namespace {

// A view of `spec`'s tensor at `data`, when there is one.
Status ViewInto(std::optional<HostTensor>& slot, const std::optional<TensorSpec>& spec,
                const void* data) {
  if (!spec.has_value()) return OkStatus();
  const std::vector<int64_t> layout = spec->minor_to_major.empty()
                                          ? RowMajorLayout(static_cast<int64_t>(spec->dims.size()))
                                          : spec->minor_to_major;
  FP8_ASSIGN_OR_RETURN(slot, HostTensor::View(spec->dtype, spec->dims, layout, data));
  return OkStatus();
}

std::optional<TensorSpec> ScaleSpec(const OperandScale& scale) {
  if (scale.mode == ScaleMode::kNone) return std::nullopt;
  return TensorSpec{DType::kF32, scale.dims, scale.minor_to_major};
}

const HostTensor* PointerTo(const std::optional<HostTensor>& view) {
  return view.has_value() ? &*view : nullptr;
}

}  // namespace

StatusOr<HostDotViews> HostDotViews::Make(const DotSpec& spec, const DotPointers& pointers) {
  HostDotViews views;
  FP8_RETURN_IF_ERROR(ViewInto(views.lhs_, spec.lhs, pointers.lhs));
  FP8_RETURN_IF_ERROR(ViewInto(views.rhs_, spec.rhs, pointers.rhs));
  FP8_RETURN_IF_ERROR(ViewInto(views.lhs_scale_, ScaleSpec(spec.lhs_scale), pointers.lhs_scale));
  FP8_RETURN_IF_ERROR(ViewInto(views.rhs_scale_, ScaleSpec(spec.rhs_scale), pointers.rhs_scale));
  FP8_RETURN_IF_ERROR(ViewInto(views.bias_, spec.bias, pointers.bias));
  FP8_RETURN_IF_ERROR(ViewInto(views.c_, spec.c, pointers.c));
  if (spec.output_scale) {
    FP8_RETURN_IF_ERROR(
        ViewInto(views.output_scale_, TensorSpec{DType::kF32, {}, {}}, pointers.output_scale));
  }
  return views;
}

DotArguments HostDotViews::arguments() const {
  DotArguments arguments;
  arguments.lhs = PointerTo(lhs_);
  arguments.rhs = PointerTo(rhs_);
  arguments.lhs_scale = PointerTo(lhs_scale_);
  arguments.rhs_scale = PointerTo(rhs_scale_);
  arguments.bias = PointerTo(bias_);
  arguments.c = PointerTo(c_);
  arguments.output_scale = PointerTo(output_scale_);
  return arguments;
}

StatusOr<std::optional<double>> RunDotInto(Backend backend, const DotSpec& spec,
                                           const DotPointers& pointers, void* output,
                                           const RunDotOptions& options, DotRunInfo* info) {
  FP8_ASSIGN_OR_RETURN(const HostDotViews views, HostDotViews::Make(spec, pointers));
  FP8_ASSIGN_OR_RETURN(DotResult result, RunDot(backend, spec, views.arguments(), options, info));
  std::memcpy(output, result.output.data(), static_cast<size_t>(result.output.size_in_bytes()));
  return result.amax;
}

CudaDotBuffers CudaBuffersOf(const DotPointers& pointers, void* output, float* amax) {
  CudaDotBuffers buffers;
  buffers.lhs = pointers.lhs;
  buffers.rhs = pointers.rhs;
  buffers.lhs_scale = static_cast<const float*>(pointers.lhs_scale);
  buffers.rhs_scale = static_cast<const float*>(pointers.rhs_scale);
  buffers.bias = pointers.bias;
  buffers.c = pointers.c;
  buffers.output_scale = static_cast<const float*>(pointers.output_scale);
  buffers.output = output;
  buffers.amax = amax;
  return buffers;
}

}  // namespace fp8dot
