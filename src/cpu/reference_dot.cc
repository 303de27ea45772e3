// The reference: exact FP8 products, f64 sums per scale block, f64 epilogue.
#include "cpu/canonical_operands.h"
#include "cpu/dot_epilogue.h"
#include "fp8dot/cpu_backend.h"

namespace fp8dot {
namespace {

// S[b, m, n] = sum over K-blocks of scale_a * scale_b * (sum_k a * b), in f64.
std::vector<double> ExactScaledProducts(const cpu::CanonicalOperands& operands,
                                        const DotArguments& arguments) {
  const int64_t k_size = operands.dot.k;
  const int64_t block = operands.ScaleBlockK();
  return cpu::ForEachOutput(
      operands, arguments, [&](const double* a_row, const double* b_row, int64_t m, int64_t n) {
        double total = 0.0;
        for (int64_t k0 = 0; k0 < k_size; k0 += block) {
          double partial = 0.0;
          for (int64_t k = k0; k < k0 + block && k < k_size; ++k) partial += a_row[k] * b_row[k];
          const int64_t kb = k0 / block;
          total += partial * operands.LhsScale(m, kb) * operands.RhsScale(n, kb);
        }
        return total;
      });
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
  return cpu::MakeResult(spec, operands, arguments, ExactScaledProducts(operands, arguments),
                         cpu::EpilogueArithmetic::kExact);
}

}  // namespace fp8dot
