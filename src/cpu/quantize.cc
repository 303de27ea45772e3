// The CPU backend of quantize.h: the plain loops the GPU kernels must equal bit for bit.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dot/activation_rule.h"
#include "dot/quantize_rule.h"
#include "fp8dot/float_codec.h"
#include "fp8dot/quantize.h"

namespace fp8dot {
namespace {

using quantize_rule::FloatFromBits;
using quantize_rule::MagnitudeBits;

constexpr int64_t kBlock = 128;

// The amax of every group, as magnitude bits, for groups of `group_rows` x `group_cols`
// elements (a group extent of 0 means the whole dimension): [row groups, col groups].
std::vector<uint32_t> GroupAmax(const std::vector<float>& x, int64_t rows, int64_t cols,
                                int64_t group_rows, int64_t group_cols, int64_t* groups_per_row) {
  group_rows = group_rows == 0 ? rows : group_rows;
  group_cols = group_cols == 0 ? cols : group_cols;
  const int64_t row_groups = (rows + group_rows - 1) / group_rows;
  const int64_t col_groups = (cols + group_cols - 1) / group_cols;
  std::vector<uint32_t> amax(static_cast<size_t>(row_groups * col_groups), 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      uint32_t& group = amax[static_cast<size_t>((r / group_rows) * col_groups + c / group_cols)];
      group = std::max(group, MagnitudeBits(x[static_cast<size_t>(r * cols + c)]));
    }
  }
  *groups_per_row = col_groups;
  return amax;
}

// Casts x (rows x cols) with the scale of each element's group into `out`, and writes the
// groups' scales into `scale` (when not null), [row groups][col groups] in spec.scale_layout.
void CastByGroups(const std::vector<float>& x, int64_t rows, int64_t cols, int64_t group_rows,
                  int64_t group_cols, const QuantizeSpec& spec, const float* given_scale, void* out,
                  float* scale) {
  const float type_max = static_cast<float>(DTypeMaxFinite(spec.output_type));
  const float margin_factor = std::ldexp(1.0f, spec.margin);
  std::vector<float> scales;
  int64_t groups_per_row = 1;
  if (given_scale != nullptr) {
    scales = {*given_scale};
    group_rows = group_cols = 0;
  } else {
    const std::vector<uint32_t> amax =
        GroupAmax(x, rows, cols, group_rows, group_cols, &groups_per_row);
    for (uint32_t bits : amax) {
      scales.push_back(quantize_rule::ScaleFromAmax(FloatFromBits(bits), margin_factor, type_max));
    }
    if (scale != nullptr) {
      const int64_t row_groups = static_cast<int64_t>(scales.size()) / groups_per_row;
      const bool column_major = spec.scale_layout == ScaleLayout::kColumnMajor;
      for (int64_t g = 0; g < static_cast<int64_t>(scales.size()); ++g) {
        const int64_t row = g / groups_per_row, col = g % groups_per_row;
        scale[column_major ? col * row_groups + row : g] = scales[static_cast<size_t>(g)];
      }
    }
  }
  const int64_t group_r = group_rows == 0 ? rows : group_rows;
  const int64_t group_c = group_cols == 0 ? cols : group_cols;
  std::vector<float> inverses;
  for (float s : scales) inverses.push_back(quantize_rule::InverseScale(s));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float inverse =
          inverses[static_cast<size_t>((r / group_r) * groups_per_row + c / group_c)];
      const float value =
          quantize_rule::ScaledForCast(x[static_cast<size_t>(r * cols + c)], inverse);
      StoreElement(spec.output_type, value, out, r * cols + c, Overflow::kSaturate);
    }
  }
}

}  // namespace

Status QuantizeOnCpu(const QuantizeSpec& spec, const QuantizeBuffers& buffers) {
  FP8_RETURN_IF_ERROR(CheckQuantizeBuffers(spec, buffers));
  FP8_ASSIGN_OR_RETURN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
  const int64_t rows = spec.rows, cols = spec.cols;
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float input = static_cast<float>(LoadElement(spec.input_type, buffers.input, i));
    float activation = input;
    if (spec.activation == QuantizeActivation::kSwiGlu) {
      const float up = static_cast<float>(LoadElement(spec.input_type, buffers.up, i));
      activation = activation_rule::SwiGlu(input, up);
    } else if (spec.activation == QuantizeActivation::kGelu) {
      activation = activation_rule::Gelu(input);
    }
    // As the framework stores it: rounded to the input type (f32 is exact; so is the input).
    x[static_cast<size_t>(i)] =
        static_cast<float>(RoundToDType(activation, spec.input_type, Overflow::kIeee));
  }
  std::vector<float> x_transposed;
  if (spec.transposed) {
    x_transposed.resize(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        x_transposed[static_cast<size_t>(c * rows + r)] = x[static_cast<size_t>(r * cols + c)];
      }
    }
  }
  const float type_max = static_cast<float>(DTypeMaxFinite(spec.output_type));
  const float margin_factor = std::ldexp(1.0f, spec.margin);
  // max |x|, when it is asked for or a given scale is not usable and x's own replaces it.
  const bool given_unusable =
      spec.given_scale && !quantize_rule::IsUsableGivenScale(*buffers.given_scale);
  int64_t unused;
  const float tensor_amax = spec.compute_amax || given_unusable
                                ? FloatFromBits(GroupAmax(x, rows, cols, 0, 0, &unused)[0])
                                : 0.0f;
  if (spec.compute_amax) *buffers.amax = tensor_amax;
  // A given scale, or this input's own when the given one is not usable (quantize.h).
  float given_scale = 0;
  const float* given = nullptr;
  if (spec.given_scale) {
    given_scale = quantize_rule::ResolveGivenScale(*buffers.given_scale, tensor_amax, margin_factor,
                                                   type_max);
    *buffers.scale = given_scale;
    given = &given_scale;
  }

  // The group extents of q and of qᵀ (in qᵀ's own rows and cols); 0 = the whole dimension.
  int64_t group_rows = 0, group_cols = 0, transposed_group_rows = 0, transposed_group_cols = 0;
  switch (spec.granularity) {
    case ScaleGranularity::kTensor:
      break;
    case ScaleGranularity::kRow:
      group_rows = transposed_group_rows = 1;
      break;
    case ScaleGranularity::k1x128:
      group_rows = transposed_group_rows = 1;
      group_cols = transposed_group_cols = kBlock;
      break;
    case ScaleGranularity::k128x128:
      group_rows = group_cols = transposed_group_rows = transposed_group_cols = kBlock;
      break;
  }
  // q's scales are an output whenever they are not given, even when q itself is not asked for
  // (then q is cast into scratch); tensor and 128x128 scales also serve qᵀ.
  if (spec.row_major || !spec.given_scale) {
    std::vector<uint8_t> unused_q;
    void* q = buffers.output;
    if (!spec.row_major) {
      unused_q.resize(x.size());
      q = unused_q.data();
    }
    CastByGroups(x, rows, cols, group_rows, group_cols, spec, given, q, buffers.scale);
  }
  if (spec.transposed) {
    CastByGroups(x_transposed, cols, rows, transposed_group_rows, transposed_group_cols, spec,
                 given, buffers.transposed_output,
                 outputs.has_transposed_scale ? buffers.transposed_scale : nullptr);
  }
  return OkStatus();
}

}  // namespace fp8dot
