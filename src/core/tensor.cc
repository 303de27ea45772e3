#include "fp8dot/tensor.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

namespace fp8dot {

std::string DimsToString(const Dims& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

int64_t ElementCount(const Dims& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

std::vector<int64_t> RowMajorLayout(int64_t rank) {
  std::vector<int64_t> layout;
  for (int64_t i = rank - 1; i >= 0; --i) layout.push_back(i);
  return layout;
}

Status ValidateLayout(const Dims& dims, const std::vector<int64_t>& minor_to_major) {
  if (minor_to_major.size() != dims.size()) {
    return InvalidArgument("layout has %zu entries but the shape %s has rank %zu",
                           minor_to_major.size(), DimsToString(dims).c_str(), dims.size());
  }
  std::vector<bool> seen(dims.size(), false);
  for (int64_t d : minor_to_major) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || seen[static_cast<size_t>(d)]) {
      return InvalidArgument("layout %s is not a permutation of the dims of %s",
                             DimsToString(minor_to_major).c_str(), DimsToString(dims).c_str());
    }
    seen[static_cast<size_t>(d)] = true;
  }
  return OkStatus();
}

std::vector<int64_t> LayoutStrides(const Dims& dims, const std::vector<int64_t>& minor_to_major) {
  const std::vector<int64_t> layout =
      minor_to_major.empty() ? RowMajorLayout(static_cast<int64_t>(dims.size())) : minor_to_major;
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = 1;
  for (int64_t d : layout) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= dims[static_cast<size_t>(d)];
  }
  return strides;
}

std::vector<int64_t> WalkOffsets(const Dims& dims, const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& walk) {
  std::vector<int64_t> offsets = {0};
  for (int64_t d : walk) {
    const int64_t size = dims[static_cast<size_t>(d)];
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

StatusOr<std::vector<int64_t>> LayoutFromStrides(const Dims& dims,
                                                 const std::vector<int64_t>& strides) {
  if (strides.size() != dims.size()) {
    return InvalidArgument("%zu strides for the %zu dims of %s", strides.size(), dims.size(),
                           DimsToString(dims).c_str());
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("dims %s: negative size", DimsToString(dims).c_str());
    if (d == 0) return RowMajorLayout(rank);
  }
  // Smallest stride first; size-1 dims (whose stride means nothing) go outermost, and ties keep
  // the row-major order, so a row-major array gets exactly RowMajorLayout.
  std::vector<int64_t> order(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) order[static_cast<size_t>(i)] = rank - 1 - i;
  auto key = [&](int64_t d) {
    const size_t i = static_cast<size_t>(d);
    return std::pair<bool, int64_t>(dims[i] == 1, dims[i] == 1 ? 0 : strides[i]);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return key(a) < key(b); });
  int64_t expected = 1;
  for (int64_t d : order) {
    const size_t i = static_cast<size_t>(d);
    if (dims[i] != 1 && strides[i] != expected) {
      return InvalidArgument(
          "dims %s with element strides %s are not a dense layout (dim %lld has stride %lld, a "
          "dense array would have %lld): a non-contiguous view (slice, step or expand); make it "
          "contiguous first",
          DimsToString(dims).c_str(), DimsToString(strides).c_str(), static_cast<long long>(d),
          static_cast<long long>(strides[i]), static_cast<long long>(expected));
    }
    if (__builtin_mul_overflow(expected, dims[i], &expected)) {
      return InvalidArgument("dims %s: too many elements", DimsToString(dims).c_str());
    }
  }
  return order;
}

StatusOr<HostTensor> HostTensor::Create(DType dtype, Dims dims) {
  std::vector<int64_t> layout = RowMajorLayout(static_cast<int64_t>(dims.size()));
  return Create(dtype, std::move(dims), std::move(layout));
}

StatusOr<HostTensor> HostTensor::Create(DType dtype, Dims dims,
                                        std::vector<int64_t> minor_to_major) {
  constexpr int64_t kMaxBytes = int64_t{1} << 40;
  // The product of the non-zero dims bounds every stride, so it must fit even when a zero dim
  // makes the tensor empty (strides are computed all the same).
  int64_t extent = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("tensor dims %s: negative size", DimsToString(dims).c_str());
    if (d == 0) {
      empty = true;
      continue;
    }
    if (extent > kMaxBytes / d) {
      return ResourceExhausted("tensor dims %s: too many elements", DimsToString(dims).c_str());
    }
    extent *= d;
  }
  const int64_t count = empty ? 0 : extent;
  const int64_t bytes = count * DTypeSizeInBytes(dtype);
  if (bytes > kMaxBytes) {
    return ResourceExhausted("tensor %s%s needs more than 1 TiB", DTypeName(dtype),
                             DimsToString(dims).c_str());
  }
  // Refuse what the machine cannot hold before asking the allocator (which would throw or, under
  // a sanitizer, abort).
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 && bytes > static_cast<int64_t>(pages) * page_size) {
    return ResourceExhausted("tensor %s%s needs %lld bytes, more than this machine's memory",
                             DTypeName(dtype), DimsToString(dims).c_str(),
                             static_cast<long long>(bytes));
  }
  FP8_RETURN_IF_ERROR(ValidateLayout(dims, minor_to_major));
  HostTensor tensor;
  tensor.dtype_ = dtype;
  tensor.dims_ = std::move(dims);
  tensor.minor_to_major_ = std::move(minor_to_major);
  tensor.strides_ = LayoutStrides(tensor.dims_, tensor.minor_to_major_);
  try {
    tensor.bytes_.assign(static_cast<size_t>(bytes), 0);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("tensor %s%s: out of host memory for %lld bytes", DTypeName(dtype),
                             DimsToString(dims).c_str(), static_cast<long long>(bytes));
  }
  return tensor;
}

StatusOr<HostTensor> HostTensor::View(DType dtype, Dims dims, std::vector<int64_t> minor_to_major,
                                      const void* data) {
  FP8_RETURN_IF_ERROR(ValidateLayout(dims, minor_to_major));
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) {
      return InvalidArgument("tensor dims %s: negative or too many elements",
                             DimsToString(dims).c_str());
    }
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, int64_t{DTypeSizeInBytes(dtype)}, &bytes)) {
    return InvalidArgument("tensor dims %s: too many bytes", DimsToString(dims).c_str());
  }
  if (data == nullptr && bytes > 0) {
    return InvalidArgument("a view of %s%s over a null pointer", DTypeName(dtype),
                           DimsToString(dims).c_str());
  }
  HostTensor tensor;
  tensor.dtype_ = dtype;
  tensor.dims_ = std::move(dims);
  tensor.minor_to_major_ = std::move(minor_to_major);
  tensor.strides_ = LayoutStrides(tensor.dims_, tensor.minor_to_major_);
  // Views are read through const accessors by the backends; the one mutable path (data()) is the
  // caller's to use on writable memory only.
  tensor.view_ = static_cast<uint8_t*>(const_cast<void*>(data));
  tensor.view_bytes_ = bytes;
  return tensor;
}

HostTensor HostTensor::Scalar(DType dtype, double value) {
  HostTensor tensor = std::move(Create(dtype, {})).value();
  tensor.SetPhysical(0, value);
  return tensor;
}

int64_t HostTensor::Offset(const std::vector<int64_t>& index) const {
  int64_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i) offset += index[i] * strides_[i];
  return offset;
}

HostTensor HostTensor::ToRowMajor() const {
  if (is_row_major()) return *this;
  HostTensor out = std::move(Create(dtype_, dims_)).value();
  const int64_t count = element_count();
  const int size = DTypeSizeInBytes(dtype_);
  std::vector<int64_t> index(dims_.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    std::memcpy(out.bytes_.data() + linear * size,
                static_cast<const uint8_t*>(data()) + Offset(index) * size,
                static_cast<size_t>(size));
    for (int64_t d = rank() - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < dims_[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

std::string ShapeString(DType dtype, const Dims& dims, const std::vector<int64_t>& minor_to_major) {
  const std::string layout = DimsToString(
      minor_to_major.empty() ? RowMajorLayout(static_cast<int64_t>(dims.size())) : minor_to_major);
  return std::string(DTypeName(dtype)) + DimsToString(dims) + "{" +
         layout.substr(1, layout.size() - 2) + "}";
}

std::string HostTensor::ShapeString() const {
  return fp8dot::ShapeString(dtype_, dims_, minor_to_major_);
}

}  // namespace fp8dot
