#include "cpu/canonical_operands.h"

#include <algorithm>
#include <limits>

#include "cpu/parallel_for.h"

namespace fp8dot::cpu {
namespace {

std::vector<int64_t> Offsets(const HostTensor& tensor, const std::vector<int64_t>& dims_to_walk) {
  return WalkOffsets(tensor.dims(), tensor.strides(), dims_to_walk);
}

std::vector<float> RowMajorScale(const HostTensor* scale) {
  if (scale == nullptr) return {};
  HostTensor row_major = scale->ToRowMajor();
  const float* values = static_cast<const float*>(row_major.data());
  return std::vector<float>(values, values + row_major.element_count());
}

}  // namespace

float CanonicalOperands::LhsScale(int64_t m, int64_t kb) const {
  const int64_t k_blocks = ScaleBlockCount(dot.k);
  switch (lhs_scale_mode) {
    case ScaleMode::kNone:
      return 1.0f;
    case ScaleMode::kTensor:
      return lhs_scale[0];
    case ScaleMode::kOuterVector:
      return lhs_scale[static_cast<size_t>(m)];
    case ScaleMode::kBlock1x128:
      return lhs_scale[static_cast<size_t>(m * k_blocks + kb)];
    case ScaleMode::kBlock128x128:
      return lhs_scale[static_cast<size_t>((m / kScaleBlockSize) * k_blocks + kb)];
  }
  return 1.0f;
}

float CanonicalOperands::RhsScale(int64_t n, int64_t kb) const {
  switch (rhs_scale_mode) {
    case ScaleMode::kNone:
      return 1.0f;
    case ScaleMode::kTensor:
      return rhs_scale[0];
    case ScaleMode::kOuterVector:
      return rhs_scale[static_cast<size_t>(n)];
    case ScaleMode::kBlock1x128:
      return rhs_scale[static_cast<size_t>(kb * dot.n + n)];
    case ScaleMode::kBlock128x128:
      return rhs_scale[static_cast<size_t>(kb * ScaleBlockCount(dot.n) + n / kScaleBlockSize)];
  }
  return 1.0f;
}

int64_t CanonicalOperands::ScaleBlockK() const {
  return IsBlockScale(lhs_scale_mode) || IsBlockScale(rhs_scale_mode) ? kScaleBlockSize : dot.k;
}

StatusOr<CanonicalOperands> Canonicalize(const DotSpec& spec, const DotArguments& arguments) {
  CanonicalOperands operands;
  FP8_ASSIGN_OR_RETURN(operands.dot, ValidateDotSpec(spec));
  FP8_RETURN_IF_ERROR(CheckArgumentsMatchSpec(spec, arguments));
  const DotDimensionNumbers& dnums = spec.dimension_numbers;
  operands.lhs = {Offsets(*arguments.lhs, dnums.lhs_batch_dimensions),
                  Offsets(*arguments.lhs, operands.dot.lhs_free_dimensions),
                  Offsets(*arguments.lhs, dnums.lhs_contracting_dimensions)};
  operands.rhs = {Offsets(*arguments.rhs, dnums.rhs_batch_dimensions),
                  Offsets(*arguments.rhs, operands.dot.rhs_free_dimensions),
                  Offsets(*arguments.rhs, dnums.rhs_contracting_dimensions)};
  operands.lhs_scale_mode = spec.lhs_scale.mode;
  operands.rhs_scale_mode = spec.rhs_scale.mode;
  operands.lhs_scale = RowMajorScale(arguments.lhs_scale);
  operands.rhs_scale = RowMajorScale(arguments.rhs_scale);
  return operands;
}

namespace {

// Reads element `position` of a tensor as T; FP8 goes through the 256-entry decode table.
template <typename T>
class ElementReader {
 public:
  explicit ElementReader(const HostTensor& tensor)
      : tensor_(tensor),
        fp8_table_(IsFp8(tensor.dtype()) ? Fp8DecodeTable(tensor.dtype()) : nullptr),
        bytes_(static_cast<const uint8_t*>(tensor.data())) {}
  T operator()(int64_t position) const {
    if (fp8_table_ != nullptr) return static_cast<T>(fp8_table_[bytes_[position]]);
    return static_cast<T>(tensor_.GetPhysical(position));
  }

 private:
  const HostTensor& tensor_;
  const float* fp8_table_;
  const uint8_t* bytes_;
};

// out[row * K + k] (kKContiguous) or out[k * rows + row] (kFreeContiguous) =
// operand(row, k) * scale(row, k / block), parallel over the outer loop.
template <typename T, typename Scale>
void Gather(const HostTensor& tensor, int64_t base, const OperandIndexing& indexing, int64_t block,
            const Scale& scale, GatherOrder order, T* out) {
  const ElementReader<T> read(tensor);
  const std::vector<int64_t>& rows = indexing.free;
  const std::vector<int64_t>& ks = indexing.contracting;
  const auto row_count = static_cast<int64_t>(rows.size());
  const auto k_size = static_cast<int64_t>(ks.size());
  if (order == GatherOrder::kKContiguous) {
    ParallelFor(row_count, /*work_per_item=*/k_size, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t row_base = base + rows[static_cast<size_t>(row)];
        for (int64_t k0 = 0; k0 < k_size; k0 += block) {
          const T factor = static_cast<T>(scale(row, k0 / block));
          for (int64_t k = k0; k < std::min(k_size, k0 + block); ++k) {
            out[row * k_size + k] = read(row_base + ks[static_cast<size_t>(k)]) * factor;
          }
        }
      }
    });
    return;
  }
  ParallelFor(k_size, /*work_per_item=*/row_count, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t k_base = base + ks[static_cast<size_t>(k)];
      for (int64_t row = 0; row < row_count; ++row) {
        out[k * row_count + row] =
            read(k_base + rows[static_cast<size_t>(row)]) * static_cast<T>(scale(row, k / block));
      }
    }
  });
}

}  // namespace

GatherOrder NaturalOrder(const OperandIndexing& indexing) {
  auto step = [](const std::vector<int64_t>& offsets) {
    return offsets.size() > 1 ? offsets[1] - offsets[0] : std::numeric_limits<int64_t>::max();
  };
  return step(indexing.contracting) <= step(indexing.free) ? GatherOrder::kKContiguous
                                                           : GatherOrder::kFreeContiguous;
}

template <typename T>
void GatherLhs(const CanonicalOperands& operands, const HostTensor& lhs, int64_t batch,
               bool apply_scales, GatherOrder order, T* out) {
  Gather(
      lhs, operands.lhs.batch[static_cast<size_t>(batch)], operands.lhs, operands.ScaleBlockK(),
      [&](int64_t m, int64_t kb) { return apply_scales ? operands.LhsScale(m, kb) : 1.0f; }, order,
      out);
}

template <typename T>
void GatherRhs(const CanonicalOperands& operands, const HostTensor& rhs, int64_t batch,
               bool apply_scales, GatherOrder order, T* out) {
  Gather(
      rhs, operands.rhs.batch[static_cast<size_t>(batch)], operands.rhs, operands.ScaleBlockK(),
      [&](int64_t n, int64_t kb) { return apply_scales ? operands.RhsScale(n, kb) : 1.0f; }, order,
      out);
}

template void GatherLhs<float>(const CanonicalOperands&, const HostTensor&, int64_t, bool,
                               GatherOrder, float*);
template void GatherLhs<double>(const CanonicalOperands&, const HostTensor&, int64_t, bool,
                                GatherOrder, double*);
template void GatherRhs<float>(const CanonicalOperands&, const HostTensor&, int64_t, bool,
                               GatherOrder, float*);
template void GatherRhs<double>(const CanonicalOperands&, const HostTensor&, int64_t, bool,
                                GatherOrder, double*);

}  // namespace fp8dot::cpu
