// Framework requests as DotSpecs: defaults, names and scale modes resolved in one place.
#include "bindings/dot_request.h"

#include <utility>

namespace fp8dot {
namespace {

StatusOr<DotDimensionNumbers> DefaultDimensionNumbers(const DotRequest& request) {
  const size_t lhs_rank = request.lhs.dims.size(), rhs_rank = request.rhs.dims.size();
  if (lhs_rank == 2 && rhs_rank == 2) return DotDimensionNumbers::Matmul();
  if (lhs_rank == 3 && rhs_rank == 3) return DotDimensionNumbers::Matmul(/*batched=*/true);
  return InvalidArgument(
      "lhs has rank %zu and rhs rank %zu: without dimension_numbers both must be matrices "
      "[M,K] x [K,N] or batches of them [B,M,K] x [B,K,N]",
      lhs_rank, rhs_rank);
}

StatusOr<OperandScale> ScaleOf(const std::optional<TensorSpec>& scale, const char* what) {
  if (!scale.has_value()) return OperandScale{};
  if (scale->dtype != DType::kF32) {
    return InvalidArgument("%s must be float32, got %s", what, FrameworkDTypeName(scale->dtype));
  }
  return OperandScale{ScaleMode::kNone, scale->dims, scale->minor_to_major};
}

// The mode of a given operand scale: named by the caller or read off its shape, which needs the
// canonical GEMM of the dot without scales.
Status ResolveScaleMode(OperandScale& scale, const std::string& mode, bool is_lhs,
                        const DotSpec& spec) {
  if (mode.empty()) {
    DotSpec unscaled = spec;
    unscaled.lhs_scale = {};
    unscaled.rhs_scale = {};
    FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(unscaled));
    FP8_ASSIGN_OR_RETURN(scale.mode, InferScaleMode(scale.dims, is_lhs, dot));
  } else {
    FP8_ASSIGN_OR_RETURN(scale.mode, ParseScaleMode(mode));
  }
  if (scale.mode == ScaleMode::kTensor) scale.minor_to_major.clear();
  return OkStatus();
}

}  // namespace

StatusOr<DotSpec> MakeDotSpec(const DotRequest& request) {
  DotSpec spec;
  spec.lhs = request.lhs;
  spec.rhs = request.rhs;
  if (request.dimension_numbers.has_value()) {
    spec.dimension_numbers = *request.dimension_numbers;
  } else {
    FP8_ASSIGN_OR_RETURN(spec.dimension_numbers, DefaultDimensionNumbers(request));
  }
  FP8_ASSIGN_OR_RETURN(spec.precision_config.operand_precision[0],
                       ParsePrecision(request.precision[0]));
  FP8_ASSIGN_OR_RETURN(spec.precision_config.operand_precision[1],
                       ParsePrecision(request.precision[1]));
  if (!request.algorithm.empty()) {
    FP8_ASSIGN_OR_RETURN(spec.precision_config.algorithm, ParseAlgorithm(request.algorithm));
  }
  spec.output_type = request.output_type;
  if (!request.lhs_scale_mode.empty() && !request.lhs_scale.has_value()) {
    return InvalidArgument("lhs_scale_mode %s without lhs_scale", request.lhs_scale_mode.c_str());
  }
  if (!request.rhs_scale_mode.empty() && !request.rhs_scale.has_value()) {
    return InvalidArgument("rhs_scale_mode %s without rhs_scale", request.rhs_scale_mode.c_str());
  }
  FP8_ASSIGN_OR_RETURN(spec.lhs_scale, ScaleOf(request.lhs_scale, "lhs_scale"));
  FP8_ASSIGN_OR_RETURN(spec.rhs_scale, ScaleOf(request.rhs_scale, "rhs_scale"));
  spec.bias = request.bias;
  spec.c = request.c;
  if (!request.epilogue.empty()) {
    FP8_ASSIGN_OR_RETURN(spec.epilogue, ParseEpilogue(request.epilogue));
  } else if (request.bias.has_value()) {
    spec.epilogue = Epilogue::kBias;
  }
  spec.alpha = request.alpha;
  spec.beta = request.beta;
  spec.output_scale = request.output_scale;
  spec.compute_amax = request.compute_amax;
  if (request.lhs_scale.has_value()) {
    FP8_RETURN_IF_ERROR(ResolveScaleMode(spec.lhs_scale, request.lhs_scale_mode, true, spec));
  }
  if (request.rhs_scale.has_value()) {
    FP8_RETURN_IF_ERROR(ResolveScaleMode(spec.rhs_scale, request.rhs_scale_mode, false, spec));
  }
  return spec;
}

StatusOr<DType> DTypeFromFrameworkName(std::string name) {
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  for (DType dtype : kAllDTypes) {
    if (name == FrameworkDTypeName(dtype)) return dtype;
  }
  if (StatusOr<DType> hlo_name = ParseDType(name); hlo_name.ok()) return hlo_name;
  return InvalidArgument(
      "dtype %s is not supported (float8_e4m3fn, float8_e5m2, bfloat16, float16, float32, "
      "float64)",
      name.c_str());
}

const char* FrameworkDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF8E4M3FN:
      return "float8_e4m3fn";
    case DType::kF8E5M2:
      return "float8_e5m2";
    case DType::kBF16:
      return "bfloat16";
    case DType::kF16:
      return "float16";
    case DType::kF32:
      return "float32";
    case DType::kF64:
      return "float64";
  }
  return DTypeName(dtype);
}

}  // namespace fp8dot
