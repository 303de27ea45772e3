#include "cuda/tensor_index.h"

namespace fp8dot::cuda {
namespace {

std::vector<int64_t> Offsets(const TensorSpec& spec, const std::vector<int64_t>& strides,
                             const std::vector<int64_t>& dims_to_walk) {
  std::vector<int64_t> offsets = {0};
  for (int64_t d : dims_to_walk) {
    const int64_t size = spec.dims[static_cast<size_t>(d)];
    const int64_t stride = strides[static_cast<size_t>(d)];
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(size));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < size; ++i) next.push_back(base + i * stride);
    }
    offsets = std::move(next);
  }
  return offsets;
}

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
  const auto rank = static_cast<int64_t>(spec.dims.size());
  const std::vector<int64_t> minor_to_major =
      spec.minor_to_major.empty() ? RowMajorLayout(rank) : spec.minor_to_major;
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  int64_t stride = 1;
  for (int64_t d : minor_to_major) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= spec.dims[static_cast<size_t>(d)];
  }
  return strides;
}

TensorIndex IndexTensor(const TensorSpec& spec, const std::vector<int64_t>& batch_dims,
                        const std::vector<int64_t>& row_dims,
                        const std::vector<int64_t>& col_dims) {
  const std::vector<int64_t> strides = ElementStrides(spec);
  return {Offsets(spec, strides, batch_dims), Offsets(spec, strides, row_dims),
          Offsets(spec, strides, col_dims)};
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
