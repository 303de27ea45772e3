// QuantizeSpec validation and the shapes it produces (include/fp8dot/quantize.h).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>

#include "fp8dot/memory_ranges.h"
#include "fp8dot/quantize.h"
#include "fp8dot/tensor.h"

namespace fp8dot {
namespace {

constexpr int64_t kBlock = 128;
constexpr int kMaxMargin = 64;

int64_t Blocks(int64_t extent) { return (extent + kBlock - 1) / kBlock; }

Status CheckPointer(const void* pointer, bool needed, const char* name, const char* why) {
  if (needed && pointer == nullptr) return InvalidArgument("quantize: %s is null (%s)", name, why);
  if (!needed && pointer != nullptr) {
    return InvalidArgument("quantize: %s is given but the spec does not use it (%s)", name, why);
  }
  return OkStatus();
}

}  // namespace

const char* ScaleGranularityName(ScaleGranularity granularity) {
  switch (granularity) {
    case ScaleGranularity::kTensor:
      return "tensor";
    case ScaleGranularity::kRow:
      return "row";
    case ScaleGranularity::k1x128:
      return "1x128";
    case ScaleGranularity::k128x128:
      return "128x128";
  }
  return "?";
}

StatusOr<ScaleGranularity> ParseScaleGranularity(const std::string& name) {
  for (ScaleGranularity granularity : {ScaleGranularity::kTensor, ScaleGranularity::kRow,
                                       ScaleGranularity::k1x128, ScaleGranularity::k128x128}) {
    if (name == ScaleGranularityName(granularity)) return granularity;
  }
  return InvalidArgument("unknown scale granularity '%s' (tensor, row, 1x128 or 128x128)",
                         name.c_str());
}

const char* ScaleLayoutName(ScaleLayout layout) {
  return layout == ScaleLayout::kColumnMajor ? "column-major" : "row-major";
}

StatusOr<ScaleLayout> ParseScaleLayout(const std::string& name) {
  for (ScaleLayout layout : {ScaleLayout::kRowMajor, ScaleLayout::kColumnMajor}) {
    if (name == ScaleLayoutName(layout)) return layout;
  }
  return InvalidArgument("unknown scale layout '%s' (row-major or column-major)", name.c_str());
}

// Every activation there is, for parsing and validation.
constexpr QuantizeActivation kQuantizeActivations[] = {
    QuantizeActivation::kNone, QuantizeActivation::kSwiGlu, QuantizeActivation::kGelu};

const char* QuantizeActivationName(QuantizeActivation activation) {
  switch (activation) {
    case QuantizeActivation::kSwiGlu:
      return "swiglu";
    case QuantizeActivation::kGelu:
      return "gelu";
    default:
      return "none";
  }
}

StatusOr<QuantizeActivation> ParseQuantizeActivation(const std::string& name) {
  for (QuantizeActivation activation : kQuantizeActivations) {
    if (name == QuantizeActivationName(activation)) return activation;
  }
  return InvalidArgument("unknown quantize activation '%s' (none, swiglu or gelu)", name.c_str());
}

StatusOr<QuantizeOutputs> ValidateQuantizeSpec(const QuantizeSpec& spec) {
  if (spec.input_type != DType::kF32 && spec.input_type != DType::kBF16 &&
      spec.input_type != DType::kF16) {
    return InvalidArgument("quantize: input type %s is not f32, bf16 or f16",
                           DTypeName(spec.input_type));
  }
  if (!IsFp8(spec.output_type)) {
    return InvalidArgument("quantize: output type %s is not an FP8 type (f8e4m3fn, f8e5m2)",
                           DTypeName(spec.output_type));
  }
  if (spec.rows <= 0 || spec.cols <= 0) {
    return InvalidArgument("quantize: the input is %lldx%lld; it needs at least one row and column",
                           static_cast<long long>(spec.rows), static_cast<long long>(spec.cols));
  }
  if (spec.rows > std::numeric_limits<int64_t>::max() / spec.cols) {
    return InvalidArgument("quantize: %lldx%lld elements overflow 64 bits",
                           static_cast<long long>(spec.rows), static_cast<long long>(spec.cols));
  }
  if (std::ranges::find(kQuantizeActivations, spec.activation) == std::end(kQuantizeActivations)) {
    return InvalidArgument("quantize: activation %d is none of none, swiglu or gelu",
                           static_cast<int>(spec.activation));
  }
  if (!spec.row_major && !spec.transposed) {
    return InvalidArgument("quantize: neither row_major nor transposed output is asked for");
  }
  if (spec.given_scale && spec.granularity != ScaleGranularity::kTensor) {
    return InvalidArgument(
        "quantize: a given scale is one value, so it needs tensor "
        "granularity, not %s",
        ScaleGranularityName(spec.granularity));
  }
  if (spec.scale_layout == ScaleLayout::kColumnMajor &&
      spec.granularity != ScaleGranularity::k1x128) {
    return InvalidArgument(
        "quantize: column-major scales are for 1x128 granularity, whose scales have a row per "
        "operand row; %s scales have one layout",
        ScaleGranularityName(spec.granularity));
  }
  if (std::abs(spec.margin) > kMaxMargin) {
    return InvalidArgument("quantize: margin %d is outside [-%d, %d]", spec.margin, kMaxMargin,
                           kMaxMargin);
  }

  QuantizeOutputs outputs;
  if (spec.row_major) outputs.output_dims = {spec.rows, spec.cols};
  if (spec.transposed) outputs.transposed_output_dims = {spec.cols, spec.rows};
  outputs.has_scale = true;  // with a given scale: the one cast with (quantize.h)
  switch (spec.granularity) {
    case ScaleGranularity::kTensor:
      outputs.scale_dims = {};
      break;
    case ScaleGranularity::kRow:
      outputs.scale_dims = {spec.rows};
      outputs.transposed_scale_dims = {spec.cols};
      break;
    case ScaleGranularity::k1x128:
      outputs.scale_dims = {spec.rows, Blocks(spec.cols)};
      outputs.transposed_scale_dims = {spec.cols, Blocks(spec.rows)};
      break;
    case ScaleGranularity::k128x128:
      outputs.scale_dims = {Blocks(spec.rows), Blocks(spec.cols)};
      break;
  }
  outputs.has_transposed_scale = spec.transposed && (spec.granularity == ScaleGranularity::kRow ||
                                                     spec.granularity == ScaleGranularity::k1x128);
  if (!outputs.has_transposed_scale) outputs.transposed_scale_dims.clear();
  if (spec.scale_layout == ScaleLayout::kColumnMajor) outputs.scale_minor_to_major = {0, 1};
  return outputs;
}

Status CheckQuantizeBuffers(const QuantizeSpec& spec, const QuantizeBuffers& buffers) {
  FP8_ASSIGN_OR_RETURN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
  FP8_RETURN_IF_ERROR(CheckPointer(buffers.input, true, "input", "always needed"));
  FP8_RETURN_IF_ERROR(CheckPointer(buffers.up, QuantizeActivationTakesUp(spec.activation), "up",
                                   "the second input of the swiglu activation"));
  FP8_RETURN_IF_ERROR(
      CheckPointer(buffers.given_scale, spec.given_scale, "given_scale", "spec.given_scale"));
  FP8_RETURN_IF_ERROR(CheckPointer(buffers.output, spec.row_major, "output", "spec.row_major"));
  FP8_RETURN_IF_ERROR(CheckPointer(buffers.scale, outputs.has_scale, "scale", "always written"));
  FP8_RETURN_IF_ERROR(CheckPointer(buffers.transposed_output, spec.transposed, "transposed_output",
                                   "spec.transposed"));
  FP8_RETURN_IF_ERROR(CheckPointer(buffers.transposed_scale, outputs.has_transposed_scale,
                                   "transposed_scale",
                                   "row and 1x128 transposes have their own scales"));
  FP8_RETURN_IF_ERROR(CheckPointer(buffers.amax, spec.compute_amax, "amax", "spec.compute_amax"));
  // Every output in memory of its own: an output over the input or the given scale, or over
  // another output, is overwritten while it is read (the scale and amax are zeroed before the
  // cast), a silently wrong result.
  const int64_t elements = spec.rows * spec.cols;
  return CheckOutputsHaveOwnMemory(
      "quantize", {{"input", buffers.input, elements * DTypeSizeInBytes(spec.input_type), false},
                   {"up", buffers.up, elements * DTypeSizeInBytes(spec.input_type), false},
                   {"given_scale", buffers.given_scale, 4, false},
                   {"output", buffers.output, elements, true},
                   {"scale", buffers.scale, 4 * ElementCount(outputs.scale_dims), true},
                   {"transposed_output", buffers.transposed_output, elements, true},
                   {"transposed_scale", buffers.transposed_scale,
                    4 * ElementCount(outputs.transposed_scale_dims), true},
                   {"amax", buffers.amax, 4, true}});
}

}  // namespace fp8dot
