// QuantizeOnCuda (cuda_backend.h): checks the spec and buffers, then enqueues the kernels of
// kernels/quantize.h in the order the scales need them.
#include <cmath>
#include <cstdint>

#include "cuda/cuda_status.h"
#include "cuda/kernels/quantize.h"
#include "fp8dot/cuda_backend.h"

namespace fp8dot {
namespace {

bool Aligned(const void* pointer, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(pointer) % bytes == 0;
}

}  // namespace

Status QuantizeOnCuda(const QuantizeSpec& spec, const QuantizeBuffers& buffers, CudaStream stream) {
  FP8_RETURN_IF_ERROR(CheckQuantizeBuffers(spec, buffers));
  const std::string context = StrFormat(
      "quantize %s%s%s[%lld,%lld] -> %s, %s scales",
      spec.activation == QuantizeActivation::kNone ? "" : QuantizeActivationName(spec.activation),
      spec.activation == QuantizeActivation::kNone ? "" : " ", DTypeName(spec.input_type),
      static_cast<long long>(spec.rows), static_cast<long long>(spec.cols),
      DTypeName(spec.output_type), ScaleGranularityName(spec.granularity));
  const float margin_factor = std::ldexp(1.0f, spec.margin);
  const float type_max = static_cast<float>(DTypeMaxFinite(spec.output_type));
  const bool vector_input =
      spec.cols % 8 == 0 && Aligned(buffers.input, 16) && Aligned(buffers.up, 16);  // up: or null
  auto bits = [](float* pointer) { return reinterpret_cast<unsigned int*>(pointer); };
  auto zero = [&](float* pointer, int64_t count) -> Status {
    FP8_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(pointer, 0, static_cast<size_t>(count) * sizeof(float), stream), context);
    return OkStatus();
  };

  cuda::QuantizeCastParams cast;
  cast.input = buffers.input;
  cast.up = buffers.up;
  cast.activation = spec.activation;
  cast.input_type = spec.input_type;
  cast.output_type = spec.output_type;
  cast.rows = spec.rows;
  cast.cols = spec.cols;
  cast.granularity = spec.granularity;
  cast.output = buffers.output;
  cast.transposed_output = buffers.transposed_output;
  cast.margin_factor = margin_factor;
  cast.type_max = type_max;
  cast.vector_input = vector_input;
  cast.vector_output = spec.cols % 8 == 0 && Aligned(buffers.output, 8);
  cast.vector_transposed_output = spec.rows % 8 == 0 && Aligned(buffers.transposed_output, 8);
  cast.column_major_scales = spec.scale_layout == ScaleLayout::kColumnMajor;
  if (spec.compute_amax) FP8_RETURN_IF_ERROR(zero(buffers.amax, 1));

  // The amax pass that tensor and row scales of this input need first (the pointers below).
  cuda::AmaxParams amax;
  amax.input = buffers.input;
  amax.up = buffers.up;
  amax.activation = spec.activation;
  amax.input_type = spec.input_type;
  amax.rows = spec.rows;
  amax.cols = spec.cols;
  amax.vector_input = vector_input;
  const bool scale_from_this_input =
      spec.granularity == ScaleGranularity::kTensor || spec.granularity == ScaleGranularity::kRow;
  if (spec.given_scale && spec.compute_amax) {
    // Delayed scaling: the given scale, or this input's own when it is not usable (quantize.h).
    // The amax pass, which every CTA skips when the given scale is usable, writes max |x| into
    // the amax output; the cast resolves the scale from the two and writes it as q's. Three
    // GPU operations with the memset above: at small shapes their count is the cost.
    amax.tensor_bits = bits(buffers.amax);
    amax.skip_when_usable = buffers.given_scale;
    FP8_RETURN_IF_ERROR(cuda::LaunchAmax(amax, stream, context));
    cast.scale = buffers.given_scale;
    cast.resolve_given_scale = true;
    cast.block_scale = buffers.scale;
    cast.amax_bits = bits(buffers.amax);
  } else if (spec.given_scale) {
    // The same without an amax output to hold the fallback's amax: the pass writes it into
    // q's scale, and one thread resolves the scale there before the cast reads it.
    FP8_RETURN_IF_ERROR(zero(buffers.scale, 1));
    amax.tensor_bits = bits(buffers.scale);
    amax.skip_when_usable = buffers.given_scale;
    FP8_RETURN_IF_ERROR(cuda::LaunchAmax(amax, stream, context));
    FP8_RETURN_IF_ERROR(cuda::LaunchResolveGivenScale(buffers.given_scale, buffers.scale,
                                                      margin_factor, type_max, stream, context));
    cast.scale = buffers.scale;
  } else if (scale_from_this_input) {
    // Pass 1: the amaxes, straight into the scale arrays; then, in place, their scales.
    const bool row = spec.granularity == ScaleGranularity::kRow;
    const int64_t scale_count = row ? spec.rows : 1;
    const int64_t transposed_count = row && spec.transposed ? spec.cols : 0;
    FP8_RETURN_IF_ERROR(zero(buffers.scale, scale_count));
    if (transposed_count > 0) FP8_RETURN_IF_ERROR(zero(buffers.transposed_scale, transposed_count));
    amax.tensor_bits = row ? bits(buffers.amax) : bits(buffers.scale);
    amax.row_bits = row ? bits(buffers.scale) : nullptr;
    amax.column_bits = transposed_count > 0 ? bits(buffers.transposed_scale) : nullptr;
    FP8_RETURN_IF_ERROR(cuda::LaunchAmax(amax, stream, context));
    if (spec.compute_amax && !row) {
      FP8_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(buffers.amax, buffers.scale, sizeof(float),
                                               cudaMemcpyDeviceToDevice, stream),
                               context);
    }
    FP8_RETURN_IF_ERROR(cuda::LaunchScalesFromAmax(buffers.scale, scale_count,
                                                   buffers.transposed_scale, transposed_count,
                                                   margin_factor, type_max, stream, context));
    cast.scale = buffers.scale;
    cast.transposed_scale = buffers.transposed_scale;
  } else {
    // One pass: block scales the cast kernel computes per tile.
    cast.block_scale = buffers.scale;
    cast.transposed_block_scale = buffers.transposed_scale;
    cast.amax_bits = spec.compute_amax ? bits(buffers.amax) : nullptr;
  }
  return cuda::LaunchQuantizeCast(cast, stream, context);
}

}  // namespace fp8dot
