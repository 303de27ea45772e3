// The quantisation kernels behind QuantizeOnCuda (src/cuda/quantize.cc):
//
//   amax kernels     max |x| of the tensor (a grid-stride stream), or per row and column (one
//                    CTA per 128x128 tile), into zeroed magnitude-bit arrays
//   scale kernels    those amaxes, in place, into the scales they give (quantize_rule.h); or a
//                    given scale, unless it is not usable (then its amax pass's scale)
//   cast kernel      q and qᵀ from one read of the input (persistent CTAs over 128x128 tiles);
//                    1x128 and 128x128 scales computed in the tile, tensor and row scales read
//                    (given, or from the two kernels above); a given tensor scale with an amax
//                    output resolved by the cast itself (resolve_given_scale)
// Each kernel reads x = SiLU(input) · up (kSwiGlu) or GELU(input) (kGelu) instead of the input
// when `activation` says so, so that an activation is quantised without ever being written.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "fp8dot/quantize.h"

namespace fp8dot::cuda {

struct QuantizeCastParams {
  const void* input = nullptr;
  const void* up = nullptr;  // kSwiGlu's second input: x = SiLU(input) · up
  DType input_type = DType::kBF16, output_type = DType::kF8E4M3FN;
  int64_t rows = 0, cols = 0;
  ScaleGranularity granularity = ScaleGranularity::kTensor;
  void* output = nullptr;                   // q, or null
  void* transposed_output = nullptr;        // qᵀ, or null
  const float* scale = nullptr;             // kTensor: one scale; kRow: one per row
  const float* transposed_scale = nullptr;  // kRow with qᵀ: one per column
  float* block_scale = nullptr;             // k1x128 / k128x128: q's scales, written
  float* transposed_block_scale = nullptr;  // k1x128 with qᵀ: qᵀ's scales, written
  unsigned int* amax_bits = nullptr;        // zeroed: max |x| of the input (magnitude bits)
  float margin_factor = 1, type_max = 0;
  bool vector_input = false;              // input (and up) 16-byte aligned, cols % 8 == 0
  bool vector_output = false;             // q 8-byte aligned, cols % 8 == 0
  bool vector_transposed_output = false;  // qᵀ 8-byte aligned, rows % 8 == 0
  bool column_major_scales = false;       // k1x128: ScaleLayout::kColumnMajor
  // kTensor with a given scale and amax_bits (delayed scaling): `scale` is the given scale,
  // which the cast resolves itself (ResolveGivenScale) against amax_bits, where the amax pass
  // put max |x| if the given scale is unusable (zero otherwise, until the cast fills it); it
  // writes the resolved scale to block_scale[0]. No separate resolve kernel, no scale memset.
  // (A flag and reused fields: a larger parameter block changed the kernel's code generation.)
  bool resolve_given_scale = false;
  QuantizeActivation activation = QuantizeActivation::kNone;  // one byte, in the padding
};

struct AmaxParams {
  const void* input = nullptr;
  const void* up = nullptr;  // as QuantizeCastParams::up
  QuantizeActivation activation = QuantizeActivation::kNone;
  DType input_type = DType::kBF16;
  int64_t rows = 0, cols = 0;
  unsigned int* tensor_bits = nullptr;  // one value, or null
  unsigned int* row_bits = nullptr;     // [rows], or null
  unsigned int* column_bits = nullptr;  // [cols], or null
  bool vector_input = false;
  // Tensor amax only: a given scale; the pass is skipped when it is usable (IsUsableGivenScale).
  const float* skip_when_usable = nullptr;
};

Status LaunchQuantizeCast(const QuantizeCastParams& params, cudaStream_t stream,
                          const std::string& context);
Status LaunchAmax(const AmaxParams& params, cudaStream_t stream, const std::string& context);
// Turns up to two arrays of amax bits into scales in place.
Status LaunchScalesFromAmax(float* first, int64_t first_count, float* second, int64_t second_count,
                            float margin_factor, float type_max, cudaStream_t stream,
                            const std::string& context);
// scale = the given scale if usable, else the scale of the amax bits `scale` holds (in place).
Status LaunchResolveGivenScale(const float* given, float* scale, float margin_factor,
                               float type_max, cudaStream_t stream, const std::string& context);

}  // namespace fp8dot::cuda
