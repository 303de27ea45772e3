// Views any dot_general operand as the batched GEMM operand A[batch, M, K] / B[batch, K, N]
// without moving data: physical offset = batch[b] + free[i] + contracting[k]. Shared by every CPU
// path, so they all read operands (and scales) the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/parallel_for.h"
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

// S in row-major [batch, M, N] with S[b, m, n] = element(a_row, b_row, m, n), where a_row and
// b_row are row m of A and column n of B of batch entry b as contiguous, unscaled f64 K-vectors.
// Rows run in parallel. The shape of every element-at-a-time CPU path (reference, emulation).
// prepare_batch(a, b) runs on each batch entry's gathered A [M, K] and B [N, K] before its
// elements: for data per operand element that `element` then reads by m and n.
template <typename Element, typename PrepareBatch>
std::vector<double> ForEachOutput(const CanonicalOperands& operands, const DotArguments& arguments,
                                  const Element& element, const PrepareBatch& prepare_batch) {
  const CanonicalDot& dot = operands.dot;
  std::vector<double> products(static_cast<size_t>(dot.batch * dot.m * dot.n));
  std::vector<double> a(static_cast<size_t>(dot.m * dot.k));  // (M, K)
  std::vector<double> b(static_cast<size_t>(dot.n * dot.k));  // (N, K)
  for (int64_t batch = 0; batch < dot.batch; ++batch) {
    GatherLhs(operands, *arguments.lhs, batch, /*apply_scales=*/false, GatherOrder::kKContiguous,
              a.data());
    GatherRhs(operands, *arguments.rhs, batch, /*apply_scales=*/false, GatherOrder::kKContiguous,
              b.data());
    prepare_batch(static_cast<const double*>(a.data()), static_cast<const double*>(b.data()));
    double* out = products.data() + batch * dot.m * dot.n;
    ParallelFor(dot.m, /*work_per_item=*/dot.n * dot.k, [&](int64_t m_begin, int64_t m_end) {
      for (int64_t m = m_begin; m < m_end; ++m) {
        for (int64_t n = 0; n < dot.n; ++n) {
          out[m * dot.n + n] = element(a.data() + m * dot.k, b.data() + n * dot.k, m, n);
        }
      }
    });
  }
  return products;
}

template <typename Element>
std::vector<double> ForEachOutput(const CanonicalOperands& operands, const DotArguments& arguments,
                                  const Element& element) {
  return ForEachOutput(operands, arguments, element, [](const double*, const double*) {});
}

}  // namespace fp8dot::cpu
