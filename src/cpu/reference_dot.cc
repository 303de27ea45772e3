// The reference: exact FP8 products, f64 sums per scale block, f64 epilogue.
#include "cpu/canonical_operands.h"
#include "cpu/dot_epilogue.h"
#include "cpu/parallel_for.h"
#include "fp8dot/cpu_backend.h"

namespace fp8dot {
namespace {

// S[b, m, n] = sum over K-blocks of scale_a * scale_b * (sum_k a * b), in f64.
std::vector<double> ExactScaledProducts(const cpu::CanonicalOperands& operands,
                                        const DotArguments& arguments) {
  const CanonicalDot& dot = operands.dot;
  const int64_t block = operands.ScaleBlockK();
  std::vector<double> products(static_cast<size_t>(dot.batch * dot.m * dot.n));
  std::vector<double> a(static_cast<size_t>(dot.m * dot.k));  // (M, K)
  std::vector<double> b(static_cast<size_t>(dot.n * dot.k));  // (N, K)
  for (int64_t batch = 0; batch < dot.batch; ++batch) {
    cpu::GatherLhs(operands, *arguments.lhs, batch, /*apply_scales=*/false,
                   cpu::GatherOrder::kKContiguous, a.data());
    cpu::GatherRhs(operands, *arguments.rhs, batch, /*apply_scales=*/false,
                   cpu::GatherOrder::kKContiguous, b.data());
    double* out = products.data() + batch * dot.m * dot.n;
    cpu::ParallelFor(dot.m, [&](int64_t m_begin, int64_t m_end) {
      for (int64_t m = m_begin; m < m_end; ++m) {
        const double* a_row = a.data() + m * dot.k;
        for (int64_t n = 0; n < dot.n; ++n) {
          const double* b_row = b.data() + n * dot.k;
          double total = 0.0;
          for (int64_t k0 = 0; k0 < dot.k; k0 += block) {
            double partial = 0.0;
            for (int64_t k = k0; k < k0 + block && k < dot.k; ++k) partial += a_row[k] * b_row[k];
            const int64_t kb = k0 / block;
            total += partial * operands.LhsScale(m, kb) * operands.RhsScale(n, kb);
          }
          out[m * dot.n + n] = total;
        }
      }
    });
  }
  return products;
}

}  // namespace

StatusOr<HostTensor> ReferenceDotExact(const DotSpec& spec, const DotArguments& arguments) {
  FP8_ASSIGN_OR_RETURN(cpu::CanonicalOperands operands, cpu::Canonicalize(spec, arguments));
  std::vector<double> d =
      cpu::ApplyEpilogue(spec, operands, arguments, ExactScaledProducts(operands, arguments));
  FP8_ASSIGN_OR_RETURN(HostTensor out, HostTensor::Create(DType::kF64, operands.dot.output_dims));
  std::copy(d.begin(), d.end(), static_cast<double*>(out.data()));
  return out;
}

StatusOr<DotResult> ReferenceDot(const DotSpec& spec, const DotArguments& arguments) {
  FP8_ASSIGN_OR_RETURN(cpu::CanonicalOperands operands, cpu::Canonicalize(spec, arguments));
  return cpu::MakeResult(spec, operands, arguments, ExactScaledProducts(operands, arguments));
}

}  // namespace fp8dot
