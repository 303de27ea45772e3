#include "cuda/tensor_index.h"

namespace fp8dot::cuda {
namespace {

std::optional<int64_t> AffineStride(const std::vector<int64_t>& offsets) {
  if (offsets.size() <= 1) return 0;
  const int64_t stride = offsets[1] - offsets[0];
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] != offsets[0] + static_cast<int64_t>(i) * stride) return std::nullopt;
  }
  return stride;
}

}  // namespace

std::vector<int64_t> ElementStrides(const TensorSpec& spec) {
  return LayoutStrides(spec.dims, spec.minor_to_major);
}

TensorIndex IndexTensor(const TensorSpec& spec, const std::vector<int64_t>& batch_dims,
                        const std::vector<int64_t>& row_dims,
                        const std::vector<int64_t>& col_dims) {
  const std::vector<int64_t> strides = ElementStrides(spec);
  return {WalkOffsets(spec.dims, strides, batch_dims), WalkOffsets(spec.dims, strides, row_dims),
          WalkOffsets(spec.dims, strides, col_dims)};
}

std::optional<AffineStrides> FindAffineStrides(const TensorIndex& index) {
  const std::optional<int64_t> batch = AffineStride(index.batch);
  const std::optional<int64_t> row = AffineStride(index.rows);
  const std::optional<int64_t> col = AffineStride(index.cols);
  if (!batch || !row || !col) return std::nullopt;
  // Offsets always start at 0 (the first index of every dim), so affine means strided.
  return AffineStrides{*batch, *row, *col};
}

}  // namespace fp8dot::cuda
