// Host tensors: an element type, logical dims, an HLO-style layout (minor_to_major) and bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fp8dot/dtype.h"
#include "fp8dot/float_codec.h"
#include "fp8dot/status.h"

namespace fp8dot {

using Dims = std::vector<int64_t>;

// "[64,128]".
std::string DimsToString(const Dims& dims);
int64_t ElementCount(const Dims& dims);
// {rank-1, ..., 1, 0}: row-major, what HLO prints as {1,0} for a matrix.
std::vector<int64_t> RowMajorLayout(int64_t rank);
// Checks that `minor_to_major` is a permutation of 0..rank-1.
Status ValidateLayout(const Dims& dims, const std::vector<int64_t>& minor_to_major);
// HLO's shape notation, "f8e4m3fn[64,128]{1,0}"; an empty layout means row-major.
std::string ShapeString(DType dtype, const Dims& dims, const std::vector<int64_t>& minor_to_major);
// Element stride of each dim under a (valid) layout; an empty layout means row-major.
std::vector<int64_t> LayoutStrides(const Dims& dims, const std::vector<int64_t>& minor_to_major);
// The layout of a dense array given each dim's element stride (numpy/torch/DLPack strides): the
// dims ordered from the smallest stride up. Dims of size 1 may have any stride (frameworks give
// them arbitrary ones); an array with no element has the row-major layout. An error when the
// strides leave gaps or overlap, i.e. the array is a non-contiguous view (slice, expand, step).
StatusOr<std::vector<int64_t>> LayoutFromStrides(const Dims& dims,
                                                 const std::vector<int64_t>& strides);

// The element offset of every multi-index over the dims in `walk` (row-major order over them:
// the last listed dim fastest), e.g. the offsets of all rows of a GEMM operand.
std::vector<int64_t> WalkOffsets(const Dims& dims, const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& walk);

class HostTensor {
 public:
  HostTensor() = default;
  // Zero-filled tensor. Fails on negative dims, a bad layout or a size that overflows.
  static StatusOr<HostTensor> Create(DType dtype, Dims dims);
  static StatusOr<HostTensor> Create(DType dtype, Dims dims, std::vector<int64_t> minor_to_major);
  // A tensor over memory the caller owns (a numpy array, a torch tensor), without a copy. The
  // memory must hold the dense tensor of that layout and outlive every use of the view and of
  // its copies (copies of a view are views of the same memory). Writing through a view of
  // read-only memory is the caller's error.
  static StatusOr<HostTensor> View(DType dtype, Dims dims, std::vector<int64_t> minor_to_major,
                                   const void* data);
  // A rank-0 tensor holding `value` (rounded to `dtype`).
  static HostTensor Scalar(DType dtype, double value);

  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  const std::vector<int64_t>& minor_to_major() const { return minor_to_major_; }
  bool is_row_major() const { return minor_to_major_ == RowMajorLayout(rank()); }
  int64_t element_count() const { return ElementCount(dims_); }
  int64_t size_in_bytes() const {
    return view_ ? view_bytes_ : static_cast<int64_t>(bytes_.size());
  }
  bool is_view() const { return view_ != nullptr; }
  // Element strides of each logical dim in the physical buffer.
  const std::vector<int64_t>& strides() const { return strides_; }

  void* data() { return view_ ? view_ : bytes_.data(); }
  const void* data() const { return view_ ? view_ : bytes_.data(); }

  // Element at a physical (buffer) position / at a logical multi-index.
  double GetPhysical(int64_t position) const { return LoadElement(dtype_, data(), position); }
  void SetPhysical(int64_t position, double value, Overflow overflow = Overflow::kIeee) {
    StoreElement(dtype_, value, data(), position, overflow);
  }
  double Get(const std::vector<int64_t>& index) const { return GetPhysical(Offset(index)); }
  void Set(const std::vector<int64_t>& index, double value) { SetPhysical(Offset(index), value); }
  int64_t Offset(const std::vector<int64_t>& index) const;

  // The same values in row-major layout.
  HostTensor ToRowMajor() const;

  // "f8e4m3fn[64,128]{1,0}", HLO's shape notation.
  std::string ShapeString() const;

 private:
  DType dtype_ = DType::kF32;
  Dims dims_;
  std::vector<int64_t> minor_to_major_;
  std::vector<int64_t> strides_;
  std::vector<uint8_t> bytes_;  // owned storage (empty for a view)
  uint8_t* view_ = nullptr;     // borrowed storage of a view
  int64_t view_bytes_ = 0;
};

}  // namespace fp8dot
