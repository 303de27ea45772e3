// Views any dot_general operand as the batched GEMM operand A[batch, M, K] / B[batch, K, N]
// without moving data: physical offset = batch[b] + free[i] + contracting[k]. Shared by every CPU
// path, so they all read operands (and scales) the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "fp8dot/dot_arguments.h"

namespace fp8dot::cpu {

struct OperandIndexing {
  std::vector<int64_t> batch;        // (batch)
  std::vector<int64_t> free;         // (M) for lhs, (N) for rhs
  std::vector<int64_t> contracting;  // (K)
};

struct CanonicalOperands {
  CanonicalDot dot;
  OperandIndexing lhs;
  OperandIndexing rhs;
  // Scales in row-major f32, empty when the mode is kNone (then the scale is 1).
  std::vector<float> lhs_scale;
  std::vector<float> rhs_scale;
  ScaleMode lhs_scale_mode = ScaleMode::kNone;
  ScaleMode rhs_scale_mode = ScaleMode::kNone;

  // Scale of row m of A in K-block kb (kb counts 128-element blocks; ignored unless blocked).
  float LhsScale(int64_t m, int64_t kb) const;
  // Scale of column n of B in K-block kb.
  float RhsScale(int64_t n, int64_t kb) const;
  // K-elements that share one scale: 128 with block scales, else all of K.
  int64_t ScaleBlockK() const;
};

// Validates spec and arguments together, then builds the views.
StatusOr<CanonicalOperands> Canonicalize(const DotSpec& spec, const DotArguments& arguments);

// How a gathered operand is laid out: kKContiguous puts each row's (or column's) K values next
// to each other ([M, K] for A, [N, K] for B); kFreeContiguous is [K, M] / [K, N].
enum class GatherOrder { kKContiguous, kFreeContiguous };

// The order that reads the operand's memory sequentially (for the BLAS path, which takes both).
GatherOrder NaturalOrder(const OperandIndexing& indexing);

// Copies A (or B) of one batch entry into `order`, as T (float or double). With `apply_scales`,
// each element is multiplied by its operand's scale.
template <typename T>
void GatherLhs(const CanonicalOperands& operands, const HostTensor& lhs, int64_t batch,
               bool apply_scales, GatherOrder order, T* out);
template <typename T>
void GatherRhs(const CanonicalOperands& operands, const HostTensor& rhs, int64_t batch,
               bool apply_scales, GatherOrder order, T* out);

}  // namespace fp8dot::cpu
