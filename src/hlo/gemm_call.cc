#include "hlo/gemm_call.h"

#include "fp8dot/hlo/gemm_backend_config.h"

namespace fp8dot::hlo {
namespace {

StatusOr<TensorSpec> FloatSpec(const HloInstruction& instruction, const Shape& shape,
                               const char* role) {
  std::optional<DType> dtype = shape.IsArray() ? ToDType(shape.element_type()) : std::nullopt;
  if (!dtype.has_value()) {
    return Unimplemented(
        "%s: %s is %s; GEMMs run only on float arrays (f8e4m3fn, f8e5m2, bf16, f16, f32, f64)",
        instruction.NameForErrors().c_str(), role, shape.ToString().c_str());
  }
  // Both executors hand values over in row-major logical order, whatever the HLO layout.
  return TensorSpec{*dtype, shape.dimensions(), {}};
}

}  // namespace

bool IsGemmCustomCall(const HloInstruction& instruction) {
  return instruction.opcode() == HloOpcode::kCustomCall &&
         (instruction.custom_call_target() == kCublasLtMatmulF8Target ||
          instruction.custom_call_target() == kCublasLtMatmulTarget);
}

StatusOr<GemmCall> DescribeGemmCustomCall(const HloInstruction& instruction) {
  const bool fp8 = instruction.custom_call_target() == kCublasLtMatmulF8Target;
  StatusOr<GemmBackendConfig> parsed = ParseGemmBackendConfig(instruction.backend_config());
  if (!parsed.ok()) {
    return Status(parsed.status().code(),
                  instruction.NameForErrors() + ": " + parsed.status().message());
  }
  const GemmBackendConfig& config = *parsed;
  if (config.alpha_imag != 0) {
    return Unimplemented("%s: complex alpha (alpha_imag=%g) is not supported",
                         instruction.NameForErrors().c_str(), config.alpha_imag);
  }
  const Shape& shape = instruction.shape();
  if (shape.IsTuple() && shape.tuple_shapes_size() == 0) {
    return InvalidArgument("%s: the result tuple is empty", instruction.NameForErrors().c_str());
  }
  GemmCall call;
  call.d_shape = shape.IsTuple() ? shape.tuple_shapes(0) : shape;
  FP8_ASSIGN_OR_RETURN(TensorSpec d, FloatSpec(instruction, call.d_shape, "the output"));

  const bool has_c = config.beta != 0;
  const bool has_scale_d = fp8 && IsFp8(d.dtype);
  const bool has_bias = EpilogueHasBias(config.epilogue);
  const int64_t expected =
      2 + (has_c ? 1 : 0) + (fp8 ? 2 : 0) + (has_scale_d ? 1 : 0) + (has_bias ? 1 : 0);
  if (instruction.operand_count() != expected) {
    return InvalidArgument(
        "%s: %s with beta=%g, epilogue %s and output %s takes %lld operands (a, b%s%s%s%s), got "
        "%lld",
        instruction.NameForErrors().c_str(), instruction.custom_call_target().c_str(), config.beta,
        EpilogueName(config.epilogue), call.d_shape.ToString().c_str(),
        static_cast<long long>(expected), has_c ? ", c" : "", fp8 ? ", a_scale, b_scale" : "",
        has_scale_d ? ", scale_d" : "", has_bias ? ", bias" : "",
        static_cast<long long>(instruction.operand_count()));
  }
  if (fp8 && config.damax_output &&
      (!shape.IsTuple() || shape.tuple_shapes_size() < 3 ||
       shape.tuple_shapes(1).element_type() != PrimitiveType::kF32 ||
       !shape.tuple_shapes(1).IsScalar())) {
    return InvalidArgument("%s: damax_output needs a result (D, f32[] amax, s8[workspace]), got %s",
                           instruction.NameForErrors().c_str(), shape.ToString().c_str());
  }

  DotSpec& spec = call.spec;
  int next = 0;
  FP8_ASSIGN_OR_RETURN(spec.lhs, FloatSpec(instruction, instruction.operand(next++)->shape(), "a"));
  FP8_ASSIGN_OR_RETURN(spec.rhs, FloatSpec(instruction, instruction.operand(next++)->shape(), "b"));
  if (has_c) {
    call.c = next;
    FP8_ASSIGN_OR_RETURN(TensorSpec c,
                         FloatSpec(instruction, instruction.operand(next++)->shape(), "c"));
    spec.c = c;
  }
  if (fp8) {
    call.a_scale = next++;
    call.b_scale = next++;
    spec.lhs_scale = {ScaleMode::kTensor, instruction.operand(call.a_scale)->shape().dimensions()};
    spec.rhs_scale = {ScaleMode::kTensor, instruction.operand(call.b_scale)->shape().dimensions()};
  }
  if (has_scale_d) {
    call.scale_d = next++;
    spec.output_scale = true;
  }
  if (has_bias) {
    call.bias = next;
    FP8_ASSIGN_OR_RETURN(TensorSpec bias,
                         FloatSpec(instruction, instruction.operand(next++)->shape(), "bias"));
    spec.bias = bias;
  }
  spec.dimension_numbers = config.dot_dimension_numbers;
  spec.precision_config = config.precision_config;
  spec.output_type = d.dtype;
  spec.alpha = config.alpha_real;
  spec.beta = config.beta;
  spec.epilogue = config.epilogue;
  spec.compute_amax = fp8 && config.damax_output;
  return call;
}

}  // namespace fp8dot::hlo
