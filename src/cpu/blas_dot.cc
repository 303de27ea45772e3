// The fast CPU path: upcast each batch entry to f32 (f64 for f64 operands) with its scales
// applied, in the order its memory is in, then one BLAS GEMM per batch entry.
#include <cblas.h>

#include "cpu/canonical_operands.h"
#include "cpu/dot_epilogue.h"
#include "fp8dot/cpu_backend.h"

namespace fp8dot {
namespace {

// Writes S in row-major [batch, M, N], as T, to `products`.
template <typename T>
void BlasScaledProducts(const cpu::CanonicalOperands& operands, const DotArguments& arguments,
                        T* products) {
  const CanonicalDot& dot = operands.dot;
  // BLAS takes either order of each operand (as a (no-)transpose): gather the cheap one.
  const cpu::GatherOrder a_order = cpu::NaturalOrder(operands.lhs);
  const cpu::GatherOrder b_order = cpu::NaturalOrder(operands.rhs);
  const bool a_k_contiguous = a_order == cpu::GatherOrder::kKContiguous;
  const bool b_k_contiguous = b_order == cpu::GatherOrder::kKContiguous;
  std::vector<T> a(static_cast<size_t>(dot.m * dot.k));  // (M, K) or (K, M)
  std::vector<T> b(static_cast<size_t>(dot.n * dot.k));  // (N, K) or (K, N)
  const auto m = static_cast<blasint>(dot.m), n = static_cast<blasint>(dot.n),
             k = static_cast<blasint>(dot.k);
  const CBLAS_TRANSPOSE a_transpose = a_k_contiguous ? CblasNoTrans : CblasTrans;
  const CBLAS_TRANSPOSE b_transpose = b_k_contiguous ? CblasTrans : CblasNoTrans;
  const blasint lda = a_k_contiguous ? k : m, ldb = b_k_contiguous ? k : n;
  for (int64_t batch = 0; batch < dot.batch; ++batch) {
    cpu::GatherLhs(operands, *arguments.lhs, batch, /*apply_scales=*/true, a_order, a.data());
    cpu::GatherRhs(operands, *arguments.rhs, batch, /*apply_scales=*/true, b_order, b.data());
    T* out = products + batch * dot.m * dot.n;
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, a_transpose, b_transpose, m, n, k, 1.0f, a.data(), lda, b.data(),
                  ldb, 0.0f, out, n);
    } else {
      cblas_dgemm(CblasRowMajor, a_transpose, b_transpose, m, n, k, 1.0, a.data(), lda, b.data(),
                  ldb, 0.0, out, n);
    }
  }
}

template <typename T>
StatusOr<DotResult> BlasDotIn(const DotSpec& spec, const cpu::CanonicalOperands& operands,
                              const DotArguments& arguments) {
  constexpr DType kProductType = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
  // NOTE: when D = S in the product's own type, the GEMM writes the output directly: at 2048^3
  // an extra epilogue/conversion pass cost ~35% of the sgemm's time (bench/cpu_gemm_bench).
  if (spec.output_type == kProductType && !spec.compute_amax &&
      cpu::DotEpilogue(spec, operands, arguments, cpu::EpilogueArithmetic::kExact).is_identity()) {
    DotResult result;
    result.accumulation = operands.dot.accumulation;
    FP8_ASSIGN_OR_RETURN(result.output, HostTensor::Create(kProductType, operands.dot.output_dims));
    BlasScaledProducts(operands, arguments, static_cast<T*>(result.output.data()));
    return result;
  }
  std::vector<T> products(
      static_cast<size_t>(operands.dot.batch * operands.dot.m * operands.dot.n));
  BlasScaledProducts(operands, arguments, products.data());
  return cpu::MakeResult(spec, operands, arguments, products,
                         cpu::EpilogueArithmetic::kComputeType);
}

}  // namespace

StatusOr<DotResult> BlasDot(const DotSpec& spec, const DotArguments& arguments) {
  FP8_ASSIGN_OR_RETURN(cpu::CanonicalOperands operands, cpu::Canonicalize(spec, arguments));
  constexpr int64_t kBlasIntMax = (int64_t{1} << 31) - 1;
  if (operands.dot.m * operands.dot.k > kBlasIntMax ||
      operands.dot.n * operands.dot.k > kBlasIntMax ||
      operands.dot.m * operands.dot.n > kBlasIntMax) {
    return Unimplemented(
        "BlasDot: each GEMM operand must have fewer than 2^31 elements (M=%lld N=%lld K=%lld)",
        static_cast<long long>(operands.dot.m), static_cast<long long>(operands.dot.n),
        static_cast<long long>(operands.dot.k));
  }
  if (spec.lhs.dtype == DType::kF64) return BlasDotIn<double>(spec, operands, arguments);
  return BlasDotIn<float>(spec, operands, arguments);
}

}  // namespace fp8dot
