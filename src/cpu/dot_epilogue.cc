#include "cpu/dot_epilogue.h"

#include <cmath>

#include "cpu/parallel_for.h"

namespace fp8dot::cpu {
namespace {

// GELU, tanh approximation (what cuBLASLt's GELU epilogue and XLA's approximate gelu compute).
double GeluTanh(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

std::vector<double> RowMajorValues(const HostTensor* tensor) {
  if (tensor == nullptr) return {};
  HostTensor row_major = tensor->ToRowMajor();
  std::vector<double> values(static_cast<size_t>(row_major.element_count()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = row_major.GetPhysical(static_cast<int64_t>(i));
  }
  return values;
}

}  // namespace

DotEpilogue::DotEpilogue(const DotSpec& spec, const CanonicalOperands& operands,
                         const DotArguments& arguments, EpilogueArithmetic arithmetic)
    : alpha_(spec.alpha),
      beta_(spec.beta),
      c_(RowMajorValues(arguments.c)),
      bias_(RowMajorValues(arguments.bias)),
      n_(static_cast<size_t>(operands.dot.n)),
      relu_(spec.epilogue == Epilogue::kRelu || spec.epilogue == Epilogue::kBiasRelu),
      gelu_(spec.epilogue == Epilogue::kGelu || spec.epilogue == Epilogue::kBiasGelu),
      identity_(alpha_ == 1.0 && c_.empty() && bias_.empty() && !relu_ && !gelu_),
      round_to_f32_(arithmetic == EpilogueArithmetic::kComputeType &&
                    operands.dot.accumulation != AccumulationMode::kF64) {}

double DotEpilogue::operator()(size_t index, double scaled_product) const {
  double value = Round(alpha_ * scaled_product);
  if (!c_.empty()) value = Round(value + Round(beta_ * c_[index]));
  if (!bias_.empty()) value = Round(value + bias_[index % n_]);
  if (relu_) value = value > 0.0 ? value : 0.0;
  if (gelu_) value = Round(GeluTanh(value));
  return value;
}

template <typename T>
std::vector<double> ApplyEpilogue(const DotSpec& spec, const CanonicalOperands& operands,
                                  const DotArguments& arguments, const std::vector<T>& products) {
  const DotEpilogue epilogue(spec, operands, arguments, EpilogueArithmetic::kExact);
  std::vector<double> d(products.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = epilogue(i, products[i]);
  return d;
}

template <typename T>
StatusOr<DotResult> MakeResult(const DotSpec& spec, const CanonicalOperands& operands,
                               const DotArguments& arguments, const std::vector<T>& products,
                               EpilogueArithmetic arithmetic) {
  DotResult result;
  result.accumulation = operands.dot.accumulation;
  FP8_ASSIGN_OR_RETURN(result.output,
                       HostTensor::Create(spec.output_type, operands.dot.output_dims));
  const DotEpilogue epilogue(spec, operands, arguments, arithmetic);
  const bool fp8_output = IsFp8(spec.output_type);
  const Overflow overflow = fp8_output ? Overflow::kSaturate : Overflow::kIeee;
  const double scale_d =
      arguments.output_scale != nullptr ? arguments.output_scale->GetPhysical(0) : 1.0;
  // NOTE: one fused pass (epilogue, amax, conversion) matters for the BLAS path, where
  // anything after the GEMM competes with OpenBLAS's spinning worker threads.
  double amax = 0.0;  // NaN wins, as max() over a NaN does
  for (size_t i = 0; i < products.size(); ++i) {
    const double d = epilogue(i, static_cast<double>(products[i]));
    if (std::isnan(d) || std::isnan(amax)) {
      amax = NAN;
    } else {
      amax = std::fmax(amax, std::fabs(d));
    }
    result.output.SetPhysical(static_cast<int64_t>(i), fp8_output ? epilogue.Round(d * scale_d) : d,
                              overflow);
  }
  if (spec.compute_amax) result.amax = amax;
  return result;
}

template std::vector<double> ApplyEpilogue<double>(const DotSpec&, const CanonicalOperands&,
                                                   const DotArguments&, const std::vector<double>&);
template StatusOr<DotResult> MakeResult<double>(const DotSpec&, const CanonicalOperands&,
                                                const DotArguments&, const std::vector<double>&,
                                                EpilogueArithmetic);
template StatusOr<DotResult> MakeResult<float>(const DotSpec&, const CanonicalOperands&,
                                               const DotArguments&, const std::vector<float>&,
                                               EpilogueArithmetic);

}  // namespace fp8dot::cpu
