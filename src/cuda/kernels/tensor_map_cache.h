// The copy engine's tensor maps of recent GEMM calls, so that a call on the same operands
// (a layer's weight, a reused activation buffer) does not encode them again.
//
// A CUtensorMap describes addressing only (base address, sizes, row stride, box, swizzle), not
// the bytes there, so a map stays right for every call whose request is equal, field by field,
// even when the memory was freed and allocated again at the same address in between. Each
// thread keeps its own cache (no locks on the launch path); a miss encodes and replaces the
// oldest entry.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>

#include "fp8dot/status.h"

namespace fp8dot::cuda {

// Everything a 2-D map over a row-major [rows][columns] tensor is encoded from.
struct TensorMap2dRequest {
  const void* data = nullptr;
  CUtensorMapDataType type{};
  int64_t rows = 0, columns = 0, row_bytes = 0;
  int box_columns = 0, box_rows = 0;
  CUtensorMapSwizzle swizzle{};
  // Spelled out: the kernels' translation unit is C++17 (nvcc), without defaulted comparisons.
  bool operator==(const TensorMap2dRequest& other) const {
    return data == other.data && type == other.type && rows == other.rows &&
           columns == other.columns && row_bytes == other.row_bytes &&
           box_columns == other.box_columns && box_rows == other.box_rows &&
           swizzle == other.swizzle;
  }
};

template <int kEntries>
class TensorMapCache {
 public:
  // The map of `request`: the cached one, or encode(request) (a StatusOr<CUtensorMap>), which
  // is kept when it succeeds.
  template <typename Encode>
  StatusOr<CUtensorMap> Get(const TensorMap2dRequest& request, Encode&& encode) {
    for (int i = 0; i < size_; ++i) {
      if (entries_[i].request == request) return entries_[i].map;
    }
    StatusOr<CUtensorMap> map = encode(request);
    if (!map.ok()) return map;
    entries_[next_] = {request, *map};
    next_ = (next_ + 1) % kEntries;
    if (size_ < kEntries) ++size_;
    return map;
  }

 private:
  struct Entry {
    TensorMap2dRequest request;
    CUtensorMap map;
  };
  std::array<Entry, kEntries> entries_{};
  int size_ = 0, next_ = 0;
};

}  // namespace fp8dot::cuda
