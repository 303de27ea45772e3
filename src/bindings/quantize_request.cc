// Framework quantisation requests as QuantizeSpecs.
#include "bindings/quantize_request.h"

#include <utility>

namespace fp8dot {

StatusOr<std::pair<QuantizeSpec, QuantizeOutputs>> MakeQuantizeSpec(
    const QuantizeRequest& request) {
  const TensorSpec& input = request.input;
  if (input.dims.size() != 2) {
    return InvalidArgument("quantize input: a matrix is needed, got shape %s",
                           DimsToString(input.dims).c_str());
  }
  const bool dense_rows = IsRowMajorLayout(input.minor_to_major, 2) || input.dims[0] == 1 ||
                          input.dims[1] == 1;  // one row or column: every layout is row-major
  if (!dense_rows) {
    return InvalidArgument("quantize input: %s is not row-major (make it contiguous first)",
                           input.ToString().c_str());
  }
  QuantizeSpec spec;
  spec.input_type = input.dtype;
  spec.output_type = request.output_type;
  spec.rows = input.dims[0];
  spec.cols = input.dims[1];
  FP8_ASSIGN_OR_RETURN(spec.granularity, ParseScaleGranularity(request.granularity));
  spec.row_major = request.row_major;
  spec.transposed = request.transposed;
  spec.given_scale = request.given_scale;
  spec.margin = request.margin;
  spec.compute_amax = request.compute_amax;
  FP8_ASSIGN_OR_RETURN(spec.scale_layout, ParseScaleLayout(request.scale_layout));
  if (request.activation.empty()) {
    spec.activation =
        request.up.has_value() ? QuantizeActivation::kSwiGlu : QuantizeActivation::kNone;
  } else {
    FP8_ASSIGN_OR_RETURN(spec.activation, ParseQuantizeActivation(request.activation));
  }
  const bool takes_up = QuantizeActivationTakesUp(spec.activation);
  if (takes_up != request.up.has_value()) {
    return InvalidArgument("quantize: the %s activation %s",
                           QuantizeActivationName(spec.activation),
                           takes_up ? "needs up (its second input)" : "takes no up");
  }
  if (request.up.has_value()) {
    const TensorSpec& up = *request.up;
    if (up.dims != input.dims || up.dtype != input.dtype) {
      return InvalidArgument("quantize up: %s does not match the input (gate) %s",
                             up.ToString().c_str(), input.ToString().c_str());
    }
    if (!IsRowMajorLayout(up.minor_to_major, 2) && up.dims[0] != 1 && up.dims[1] != 1) {
      return InvalidArgument("quantize up: %s is not row-major (make it contiguous first)",
                             up.ToString().c_str());
    }
  }
  FP8_ASSIGN_OR_RETURN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
  return std::make_pair(spec, std::move(outputs));
}

}  // namespace fp8dot
