// Validation of a DotSpec: one function, ValidateDotSpec, checked top to bottom in the order a
// reader would check a dot: operands, dimension numbers, types and precision, scales, C, bias,
// output options.
#include "fp8dot/dot_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace fp8dot {
namespace {

Status ValidateOperand(const char* name, const TensorSpec& operand) {
  for (int64_t d : operand.dims) {
    if (d <= 0) {
      return InvalidArgument("%s %s: every dim must be positive", name, operand.ToString().c_str());
    }
  }
  if (!operand.minor_to_major.empty()) {
    Status layout = ValidateLayout(operand.dims, operand.minor_to_major);
    if (!layout.ok()) return InvalidArgument("%s: %s", name, layout.message().c_str());
  }
  return OkStatus();
}

// Checks one operand's batch and contracting dims: in range, no repeats, and returns the free
// dims (those in neither list), in increasing order.
StatusOr<std::vector<int64_t>> FreeDimensions(const char* name, const TensorSpec& operand,
                                              const std::vector<int64_t>& batch,
                                              const std::vector<int64_t>& contracting) {
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (const auto* list : {&batch, &contracting}) {
    const char* kind = list == &batch ? "batch" : "contracting";
    for (int64_t d : *list) {
      if (d < 0 || d >= rank) {
        return InvalidArgument("%s %s dim %lld is out of range for rank %lld (%s)", name, kind,
                               static_cast<long long>(d), static_cast<long long>(rank),
                               operand.ToString().c_str());
      }
      if (used[static_cast<size_t>(d)]) {
        return InvalidArgument("%s dim %lld appears more than once in the batch/contracting dims",
                               name, static_cast<long long>(d));
      }
      used[static_cast<size_t>(d)] = true;
    }
  }
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!used[static_cast<size_t>(d)]) free.push_back(d);
  }
  return free;
}

Status MatchPairedDims(const char* kind, const DotSpec& spec, const std::vector<int64_t>& lhs,
                       const std::vector<int64_t>& rhs) {
  if (lhs.size() != rhs.size()) {
    return InvalidArgument("lhs has %zu %s dims but rhs has %zu", lhs.size(), kind, rhs.size());
  }
  for (size_t i = 0; i < lhs.size(); ++i) {
    int64_t lhs_size = spec.lhs.dims[static_cast<size_t>(lhs[i])];
    int64_t rhs_size = spec.rhs.dims[static_cast<size_t>(rhs[i])];
    if (lhs_size != rhs_size) {
      return InvalidArgument("lhs %s dim %lld has size %lld but rhs %s dim %lld has size %lld",
                             kind, static_cast<long long>(lhs[i]), static_cast<long long>(lhs_size),
                             kind, static_cast<long long>(rhs[i]),
                             static_cast<long long>(rhs_size));
    }
  }
  return OkStatus();
}

int64_t ProductOfDims(const Dims& dims, const std::vector<int64_t>& which) {
  int64_t product = 1;
  for (int64_t d : which) product *= dims[static_cast<size_t>(d)];
  return product;
}

Status ValidateScale(const char* name, const OperandScale& scale, bool is_lhs,
                     const CanonicalDot& dot) {
  if (scale.mode == ScaleMode::kNone) return OkStatus();
  if (!scale.minor_to_major.empty()) {
    Status layout = ValidateLayout(scale.dims, scale.minor_to_major);
    if (!layout.ok()) {
      return InvalidArgument("%s scale (mode %s) layout: %s", name, ScaleModeName(scale.mode),
                             layout.message().c_str());
    }
  }
  if (scale.mode == ScaleMode::kTensor) {
    if (ElementCount(scale.dims) == 1 && scale.dims.size() <= 1) return OkStatus();
    return InvalidArgument("%s scale (mode tensor) must be a scalar ([] or [1]), got %s", name,
                           DimsToString(scale.dims).c_str());
  }
  Dims expected = ExpectedScaleDims(scale.mode, is_lhs, dot);
  if (scale.dims != expected) {
    return InvalidArgument("%s scale (mode %s) must have shape %s, got %s", name,
                           ScaleModeName(scale.mode), DimsToString(expected).c_str(),
                           DimsToString(scale.dims).c_str());
  }
  return OkStatus();
}

Status ValidateScalePair(const DotSpec& spec, const CanonicalDot& dot) {
  const bool lhs_block = IsBlockScale(spec.lhs_scale.mode);
  const bool rhs_block = IsBlockScale(spec.rhs_scale.mode);
  if (!lhs_block && !rhs_block) return OkStatus();
  if (lhs_block != rhs_block) {
    return InvalidArgument("block scales must be used on both operands, got lhs %s and rhs %s",
                           ScaleModeName(spec.lhs_scale.mode), ScaleModeName(spec.rhs_scale.mode));
  }
  if (spec.lhs_scale.mode == ScaleMode::kBlock128x128 &&
      spec.rhs_scale.mode == ScaleMode::kBlock128x128) {
    return InvalidArgument(
        "block scales 128x128 x 128x128 are not supported (allowed: 1x128 x 1x128, "
        "1x128 x 128x128, 128x128 x 1x128)");
  }
  if (dot.accumulation == AccumulationMode::kFp8Fast) {
    return InvalidArgument(
        "fast accumulation (precision %s,%s, algorithm %s) cannot be used with block scales: "
        "use HIGHEST or ALG_DOT_ANY_F8_ANY_F8_F32",
        PrecisionName(spec.precision_config.operand_precision[0]),
        PrecisionName(spec.precision_config.operand_precision[1]),
        AlgorithmName(spec.precision_config.algorithm));
  }
  return OkStatus();
}

Status ValidateOutputOptions(const DotSpec& spec, const CanonicalDot& dot) {
  const DType out = spec.output_type;
  if (out == DType::kF64 && spec.lhs.dtype != DType::kF64) {
    return InvalidArgument("output type f64 needs f64 operands, got %s", DTypeName(spec.lhs.dtype));
  }
  // C and bias follow cuBLASLt: with an FP8 D they are bf16 or f16; otherwise C has D's type and
  // the bias has D's type or f32.
  auto check_aux_type = [&](const char* name, DType type, bool f32_allowed) -> Status {
    if (IsFp8(out)) {
      if (type == DType::kBF16 || type == DType::kF16) return OkStatus();
      return InvalidArgument("%s must be bf16 or f16 when the output is %s, got %s", name,
                             DTypeName(out), DTypeName(type));
    }
    if (type == out || (f32_allowed && type == DType::kF32)) return OkStatus();
    return InvalidArgument("%s must have the output type %s%s, got %s", name, DTypeName(out),
                           f32_allowed ? " or f32" : "", DTypeName(type));
  };
  if (spec.beta != 0.0 && !spec.c.has_value()) {
    return InvalidArgument("beta is %g but no C matrix was given", spec.beta);
  }
  if (spec.c.has_value()) {
    FP8_RETURN_IF_ERROR(ValidateOperand("C", *spec.c));
    if (spec.c->dims != dot.output_dims) {
      return InvalidArgument("C must have the output's dims %s, got %s",
                             DimsToString(dot.output_dims).c_str(),
                             DimsToString(spec.c->dims).c_str());
    }
    FP8_RETURN_IF_ERROR(check_aux_type("C", spec.c->dtype, /*f32_allowed=*/false));
  }
  if (EpilogueHasBias(spec.epilogue) && !spec.bias.has_value()) {
    return InvalidArgument("epilogue %s needs a bias, but none was given",
                           EpilogueName(spec.epilogue));
  }
  if (!EpilogueHasBias(spec.epilogue) && spec.bias.has_value()) {
    return InvalidArgument("epilogue %s takes no bias, but one was given (use a BIAS epilogue)",
                           EpilogueName(spec.epilogue));
  }
  if (spec.bias.has_value()) {
    Dims expected;
    for (int64_t d : dot.rhs_free_dimensions)
      expected.push_back(spec.rhs.dims[static_cast<size_t>(d)]);
    if (spec.bias->dims != expected) {
      return InvalidArgument("bias must have one value per output column, shape %s, got %s",
                             DimsToString(expected).c_str(), DimsToString(spec.bias->dims).c_str());
    }
    FP8_RETURN_IF_ERROR(check_aux_type("bias", spec.bias->dtype, /*f32_allowed=*/true));
  }
  if (spec.output_scale && !IsFp8(out)) {
    return InvalidArgument("an output scale (scale_d) needs an FP8 output type, got %s",
                           DTypeName(out));
  }
  if (!std::isfinite(spec.alpha) || !std::isfinite(spec.beta)) {
    return InvalidArgument("alpha and beta must be finite, got alpha=%g beta=%g", spec.alpha,
                           spec.beta);
  }
  return OkStatus();
}

}  // namespace

std::string TensorSpec::ToString() const { return ShapeString(dtype, dims, minor_to_major); }

DotDimensionNumbers DotDimensionNumbers::Matmul(bool batched) {
  if (batched) return {{0}, {0}, {2}, {1}};
  return {{}, {}, {1}, {0}};
}

const char* ScaleModeName(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::kNone:
      return "none";
    case ScaleMode::kTensor:
      return "tensor";
    case ScaleMode::kOuterVector:
      return "outer";
    case ScaleMode::kBlock1x128:
      return "1x128";
    case ScaleMode::kBlock128x128:
      return "128x128";
  }
  return "?";
}

StatusOr<ScaleMode> ParseScaleMode(std::string_view text) {
  std::string lower = AsciiLowercase(text);
  for (ScaleMode mode : {ScaleMode::kNone, ScaleMode::kTensor, ScaleMode::kOuterVector,
                         ScaleMode::kBlock1x128, ScaleMode::kBlock128x128}) {
    if (lower == ScaleModeName(mode)) return mode;
  }
  if (lower == "row" || lower == "column" || lower == "channel") return ScaleMode::kOuterVector;
  return InvalidArgument(
      "unknown scale mode '%.*s' (expected none, tensor, outer, 1x128 or 128x128)",
      static_cast<int>(text.size()), text.data());
}

bool IsBlockScale(ScaleMode mode) {
  return mode == ScaleMode::kBlock1x128 || mode == ScaleMode::kBlock128x128;
}

const char* EpilogueName(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::kDefault:
      return "DEFAULT";
    case Epilogue::kBias:
      return "BIAS";
    case Epilogue::kRelu:
      return "RELU";
    case Epilogue::kBiasRelu:
      return "BIAS_RELU";
    case Epilogue::kGelu:
      return "GELU";
    case Epilogue::kBiasGelu:
      return "BIAS_GELU";
  }
  return "?";
}

StatusOr<Epilogue> ParseEpilogue(std::string_view text) {
  std::string lower = AsciiLowercase(text);
  for (Epilogue e : {Epilogue::kDefault, Epilogue::kBias, Epilogue::kRelu, Epilogue::kBiasRelu,
                     Epilogue::kGelu, Epilogue::kBiasGelu}) {
    if (lower == AsciiLowercase(EpilogueName(e))) return e;
  }
  if (lower == "none") return Epilogue::kDefault;
  return InvalidArgument(
      "unknown epilogue '%.*s' (expected none, bias, relu, bias_relu, gelu or bias_gelu)",
      static_cast<int>(text.size()), text.data());
}

bool EpilogueHasBias(Epilogue epilogue) {
  return epilogue == Epilogue::kBias || epilogue == Epilogue::kBiasRelu ||
         epilogue == Epilogue::kBiasGelu;
}

Dims ExpectedScaleDims(ScaleMode mode, bool is_lhs, const CanonicalDot& dot) {
  const int64_t k_blocks = ScaleBlockCount(dot.k);
  switch (mode) {
    case ScaleMode::kNone:
    case ScaleMode::kTensor:
      return {};
    case ScaleMode::kOuterVector:
      return {is_lhs ? dot.m : dot.n};
    case ScaleMode::kBlock1x128:
      return is_lhs ? Dims{dot.m, k_blocks} : Dims{k_blocks, dot.n};
    case ScaleMode::kBlock128x128:
      return is_lhs ? Dims{ScaleBlockCount(dot.m), k_blocks}
                    : Dims{k_blocks, ScaleBlockCount(dot.n)};
  }
  return {};
}

std::vector<int64_t> InPlaceScaleLayout(ScaleMode mode, bool is_lhs) {
  const bool column_major =
      is_lhs ? mode == ScaleMode::kBlock1x128 : mode == ScaleMode::kBlock128x128;
  return column_major ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{};
}

StatusOr<ScaleMode> InferScaleMode(const Dims& scale_dims, bool is_lhs, const CanonicalDot& dot) {
  if (scale_dims == Dims{1}) return ScaleMode::kTensor;
  std::string expected;
  for (ScaleMode mode : {ScaleMode::kTensor, ScaleMode::kOuterVector, ScaleMode::kBlock1x128,
                         ScaleMode::kBlock128x128}) {
    const Dims dims = ExpectedScaleDims(mode, is_lhs, dot);
    if (scale_dims == dims) return mode;
    expected +=
        std::string(expected.empty() ? "" : ", ") + ScaleModeName(mode) + " " + DimsToString(dims);
  }
  return InvalidArgument("%s scale of shape %s fits no scale mode for M=%lld N=%lld K=%lld (%s)",
                         is_lhs ? "lhs" : "rhs", DimsToString(scale_dims).c_str(),
                         static_cast<long long>(dot.m), static_cast<long long>(dot.n),
                         static_cast<long long>(dot.k), expected.c_str());
}

bool IsNativeFp8Pair(DType lhs, DType rhs) {
  return IsFp8(lhs) && IsFp8(rhs) && !(lhs == DType::kF8E5M2 && rhs == DType::kF8E5M2);
}

StatusOr<CanonicalDot> ValidateDotSpec(const DotSpec& spec) {
  FP8_RETURN_IF_ERROR(ValidateOperand("lhs", spec.lhs));
  FP8_RETURN_IF_ERROR(ValidateOperand("rhs", spec.rhs));

  const DotDimensionNumbers& dnums = spec.dimension_numbers;
  CanonicalDot dot;
  FP8_ASSIGN_OR_RETURN(dot.lhs_free_dimensions,
                       FreeDimensions("lhs", spec.lhs, dnums.lhs_batch_dimensions,
                                      dnums.lhs_contracting_dimensions));
  FP8_ASSIGN_OR_RETURN(dot.rhs_free_dimensions,
                       FreeDimensions("rhs", spec.rhs, dnums.rhs_batch_dimensions,
                                      dnums.rhs_contracting_dimensions));
  FP8_RETURN_IF_ERROR(
      MatchPairedDims("batch", spec, dnums.lhs_batch_dimensions, dnums.rhs_batch_dimensions));
  FP8_RETURN_IF_ERROR(MatchPairedDims("contracting", spec, dnums.lhs_contracting_dimensions,
                                      dnums.rhs_contracting_dimensions));

  dot.batch = ProductOfDims(spec.lhs.dims, dnums.lhs_batch_dimensions);
  dot.k = ProductOfDims(spec.lhs.dims, dnums.lhs_contracting_dimensions);
  dot.m = ProductOfDims(spec.lhs.dims, dot.lhs_free_dimensions);
  dot.n = ProductOfDims(spec.rhs.dims, dot.rhs_free_dimensions);
  for (int64_t d : dnums.lhs_batch_dimensions)
    dot.output_dims.push_back(spec.lhs.dims[static_cast<size_t>(d)]);
  for (int64_t d : dot.lhs_free_dimensions)
    dot.output_dims.push_back(spec.lhs.dims[static_cast<size_t>(d)]);
  for (int64_t d : dot.rhs_free_dimensions)
    dot.output_dims.push_back(spec.rhs.dims[static_cast<size_t>(d)]);

  FP8_ASSIGN_OR_RETURN(dot.accumulation,
                       ResolveAccumulation(spec.lhs.dtype, spec.rhs.dtype, spec.precision_config));
  const bool fp8 = IsFp8Accumulation(dot.accumulation);
  if (!fp8 &&
      (spec.lhs_scale.mode != ScaleMode::kNone || spec.rhs_scale.mode != ScaleMode::kNone)) {
    if (IsBlockScale(spec.lhs_scale.mode) || IsBlockScale(spec.rhs_scale.mode) ||
        spec.lhs_scale.mode == ScaleMode::kOuterVector ||
        spec.rhs_scale.mode == ScaleMode::kOuterVector) {
      return InvalidArgument("scale modes other than tensor need FP8 operands, got %s x %s",
                             DTypeName(spec.lhs.dtype), DTypeName(spec.rhs.dtype));
    }
  }
  FP8_RETURN_IF_ERROR(ValidateScale("lhs", spec.lhs_scale, /*is_lhs=*/true, dot));
  FP8_RETURN_IF_ERROR(ValidateScale("rhs", spec.rhs_scale, /*is_lhs=*/false, dot));
  FP8_RETURN_IF_ERROR(ValidateScalePair(spec, dot));
  FP8_RETURN_IF_ERROR(ValidateOutputOptions(spec, dot));
  return dot;
}

namespace {

std::string ListKey(const std::vector<int64_t>& values) { return DimsToString(values); }

// A layout keyed by the memory it describes: empty when that is row-major's, else "L" and the
// layout. With size-1 (or empty) dims, whose strides are never used, both the layout and
// row-major are first put in LayoutFromStrides's order of the same memory, so that the two
// spellings of a [M, 1] or [1, N] array's layout (XLA and the bindings write either) find the
// same plan. A layout that is not a permutation keys as given.
std::string LayoutKey(const Dims& dims, const std::vector<int64_t>& minor_to_major) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> layout = minor_to_major.empty() ? RowMajorLayout(rank) : minor_to_major;
  std::vector<int64_t> row_major = RowMajorLayout(rank);
  const bool has_unit_dims =
      std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d <= 1; });
  if (has_unit_dims && ValidateLayout(dims, layout).ok()) {
    auto in_memory_order = [&](std::vector<int64_t>& order) {
      StatusOr<std::vector<int64_t>> canonical =
          LayoutFromStrides(dims, LayoutStrides(dims, order));
      if (canonical.ok()) order = *std::move(canonical);
    };
    in_memory_order(layout);
    in_memory_order(row_major);
  }
  if (layout == row_major) return "";
  return StrFormat("L%s", ListKey(layout).c_str());
}

std::string TensorKey(const TensorSpec& t) {
  const auto& [dtype, dims, minor_to_major] = t;  // every field (fails to compile otherwise)
  return StrFormat("%s%s%s", DTypeName(dtype), ListKey(dims).c_str(),
                   LayoutKey(dims, minor_to_major).c_str());
}

std::string OptionalTensorKey(const std::optional<TensorSpec>& t) {
  return t ? TensorKey(*t) : std::string("-");
}

// A scale: mode, dims and layout.
std::string ScaleKey(const OperandScale& scale) {
  const auto& [mode, dims, minor_to_major] = scale;  // every field (fails to compile otherwise)
  return StrFormat("%s%s%s", ScaleModeName(mode), ListKey(dims).c_str(),
                   LayoutKey(dims, minor_to_major).c_str());
}

}  // namespace

bool IsRowMajorLayout(const std::vector<int64_t>& minor_to_major, size_t rank) {
  return minor_to_major.empty() || minor_to_major == RowMajorLayout(static_cast<int64_t>(rank));
}

std::string DotSpecKey(const DotSpec& spec) {
  // Every field, by name: a field added to DotSpec breaks this binding until it is keyed.
  const auto& [lhs, rhs, dimension_numbers, precision_config, output_type, lhs_scale, rhs_scale,
               alpha, beta, c, epilogue, bias, output_scale, compute_amax] = spec;
  const auto& [lhs_batch, rhs_batch, lhs_contracting, rhs_contracting] = dimension_numbers;
  const auto& [operand_precision, algorithm] = precision_config;
  std::string key = StrFormat("%sx%s|b%s%s|c%s%s|p", TensorKey(lhs).c_str(), TensorKey(rhs).c_str(),
                              ListKey(lhs_batch).c_str(), ListKey(rhs_batch).c_str(),
                              ListKey(lhs_contracting).c_str(), ListKey(rhs_contracting).c_str());
  for (Precision precision : operand_precision) {
    key.append(PrecisionName(precision)).append(",");
  }
  key.append(AlgorithmName(algorithm));
  key += StrFormat("|o%s|s%s,%s", DTypeName(output_type), ScaleKey(lhs_scale).c_str(),
                   ScaleKey(rhs_scale).c_str());
  // alpha and beta are exact in %a; beta's zero-ness changes the plan, the values do not, but
  // they are cheap to key on and keep one plan per distinct call.
  key += StrFormat("|a%a,%a", alpha, beta);
  key += StrFormat("|C%s|e%s|B%s", OptionalTensorKey(c).c_str(), EpilogueName(epilogue),
                   OptionalTensorKey(bias).c_str());
  key += StrFormat("|d%d%d", output_scale ? 1 : 0, compute_amax ? 1 : 0);
  return key;
}

}  // namespace fp8dot
