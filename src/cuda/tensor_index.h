// Where each element of a GEMM operand (or of C, or of the bias) lives in the caller's buffer,
// for any dot_general dims and any layout: the tensor viewed as [batch][rows][cols] with
// element offset = batch[b] + rows[r] + cols[c] (each list walks its dims in row-major order).
// The plan uses it to decide whether cuBLASLt can read the buffer as it is, or whether a device
// gather must first copy it into the canonical layout.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fp8dot/dot_spec.h"

namespace fp8dot::cuda {

struct TensorIndex {
  std::vector<int64_t> batch;  // (batch)
  std::vector<int64_t> rows;   // (M) for lhs and C, (N) for rhs, (1) for the bias
  std::vector<int64_t> cols;   // (K) for lhs and rhs, (N) for C and the bias
};

// Element strides of each logical dim of `spec` (minor_to_major; empty = row-major).
std::vector<int64_t> ElementStrides(const TensorSpec& spec);

TensorIndex IndexTensor(const TensorSpec& spec, const std::vector<int64_t>& batch_dims,
                        const std::vector<int64_t>& row_dims, const std::vector<int64_t>& col_dims);

// The strides when every list is affine (offset = b*batch + r*row + c*col). A list of one entry
// has stride 0 (any stride fits it).
struct AffineStrides {
  int64_t batch = 0, row = 0, col = 0;
};
std::optional<AffineStrides> FindAffineStrides(const TensorIndex& index);

}  // namespace fp8dot::cuda
