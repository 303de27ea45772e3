// Dots and GEMM custom calls in the HLO interpreter: each becomes a DotSpec that runs on the
// chosen dot backend (HloInterpreter::RunDot), so the accumulation is whatever
// ResolveAccumulation decides for the operand types and the PrecisionConfig.
#include <string>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "hlo/interpreter_ops.h"
#include "hlo/passes/fp8_gemm_rewriter.h"
#include "hlo/passes/gemm_backend_config.h"

namespace fp8dot::hlo {
namespace {

Status Prefixed(const HloInstruction& instruction, const Status& status) {
  return Status(status.code(), instruction.NameForErrors() + ": " + status.message());
}

// A float array value as a row-major HostTensor, or an error naming the role ("lhs", "bias").
StatusOr<HostTensor> OperandTensor(const HloInstruction& instruction, const Value& value,
                                   const char* role) {
  if (value.IsTuple() || !ToDType(value.shape.element_type()).has_value()) {
    return Unimplemented(
        "%s: %s is %s; the interpreter runs dots only on float operands (f8e4m3fn, f8e5m2, "
        "bf16, f16, f32, f64)",
        instruction.NameForErrors().c_str(), role, value.ShapeString().c_str());
  }
  return ValueToHostTensor(value, instruction.NameForErrors() + " " + role);
}

StatusOr<DType> OutputDType(const HloInstruction& instruction, const Shape& shape) {
  std::optional<DType> dtype = shape.IsArray() ? ToDType(shape.element_type()) : std::nullopt;
  if (!dtype.has_value()) {
    return Unimplemented(
        "%s: output %s is not a float array; the interpreter runs dots only with "
        "float outputs",
        instruction.NameForErrors().c_str(), shape.ToString().c_str());
  }
  return *dtype;
}

StatusOr<Value> OutputValue(const HloInstruction& instruction, const HostTensor& output,
                            const Shape& shape) {
  StatusOr<Value> value = ValueFromHostTensor(output, shape, "output");
  if (!value.ok()) return Prefixed(instruction, value.status());
  return value;
}

// Zeros of `shape` (the s8 workspace of a GEMM custom call).
Value Zeros(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Value> elements;
    for (const Shape& element : shape.tuple_shapes()) elements.push_back(Zeros(element));
    return Value::Tuple(std::move(elements));
  }
  return Value::Array(shape,
                      std::vector<double>(static_cast<size_t>(std::max<int64_t>(
                                              shape.IsArray() ? shape.ElementCount() : 0, 0)),
                                          0.0));
}

}  // namespace

StatusOr<DotResult> HloInterpreter::RunDot(const HloInstruction& instruction, const DotSpec& spec,
                                           const DotArguments& arguments) {
  CudaDotStats stats;
  stats.milliseconds = -1;
  StatusOr<DotResult> result = [&]() -> StatusOr<DotResult> {
    switch (options_.dot_backend) {
      case DotBackend::kCpuEmulation:
        return EmulatedDot(spec, arguments, options_.accumulator_model);
      case DotBackend::kCpuBlas:
        return BlasDot(spec, arguments);
      case DotBackend::kCpuReference:
        return ReferenceDot(spec, arguments);
      case DotBackend::kCuda:
        return CudaDot(spec, arguments, &stats);
    }
    return Internal("unknown dot backend");
  }();
  if (!result.ok()) return Prefixed(instruction, result.status());
  GemmRecord record;
  record.instruction = instruction.NameForErrors();
  record.problem =
      spec.lhs.ToString() + " x " + spec.rhs.ToString() + " -> " + DTypeName(spec.output_type);
  record.accumulation = result->accumulation;
  if (options_.dot_backend == DotBackend::kCuda) record.device_milliseconds = stats.milliseconds;
  gemm_records_.push_back(std::move(record));
  return result;
}

namespace internal {

StatusOr<Value> EvalDot(HloInterpreter& interpreter, const HloInstruction& instruction,
                        const Value& lhs, const Value& rhs) {
  FP8_ASSIGN_OR_RETURN(HostTensor lhs_tensor, OperandTensor(instruction, lhs, "lhs"));
  FP8_ASSIGN_OR_RETURN(HostTensor rhs_tensor, OperandTensor(instruction, rhs, "rhs"));
  DotSpec spec;
  spec.lhs = TensorSpec::Of(lhs_tensor);
  spec.rhs = TensorSpec::Of(rhs_tensor);
  spec.dimension_numbers = instruction.dot_dimension_numbers();
  spec.precision_config = instruction.precision_config();
  FP8_ASSIGN_OR_RETURN(spec.output_type, OutputDType(instruction, instruction.shape()));
  DotArguments arguments;
  arguments.lhs = &lhs_tensor;
  arguments.rhs = &rhs_tensor;
  FP8_ASSIGN_OR_RETURN(DotResult result, interpreter.RunDot(instruction, spec, arguments));
  return OutputValue(instruction, result.output, instruction.shape());
}

// __cublas$lt$matmul$f8: operands a, b, [c if beta != 0], a_scale, b_scale, [scale_d if D is
//   FP8], [bias if the epilogue has BIAS]; result (D, [f32[] amax if damax_output], s8[ws]).
// __cublas$lt$matmul:    operands a, b, [c if beta != 0], [bias]; result (D, s8[ws]) or D.
StatusOr<Value> EvalGemmCustomCall(HloInterpreter& interpreter, const HloInstruction& instruction,
                                   const std::vector<const Value*>& operands) {
  const bool fp8 = instruction.custom_call_target() == kCublasLtMatmulF8Target;
  StatusOr<GemmBackendConfig> parsed = ParseGemmBackendConfig(instruction.backend_config());
  if (!parsed.ok()) return Prefixed(instruction, parsed.status());
  const GemmBackendConfig& config = *parsed;
  if (config.alpha_imag != 0) {
    return Unimplemented("%s: complex alpha (alpha_imag=%g) is not supported",
                         instruction.NameForErrors().c_str(), config.alpha_imag);
  }
  const Shape& shape = instruction.shape();
  const Shape& d_shape = shape.IsTuple() ? shape.tuple_shapes(0) : shape;
  if (shape.IsTuple() && shape.tuple_shapes_size() == 0) {
    return InvalidArgument("%s: the result tuple is empty", instruction.NameForErrors().c_str());
  }
  FP8_ASSIGN_OR_RETURN(DType d_type, OutputDType(instruction, d_shape));

  // Walk the operand list in the order the custom call defines.
  const bool has_c = config.beta != 0;
  const bool has_scale_d = fp8 && IsFp8(d_type);
  const bool has_bias = EpilogueHasBias(config.epilogue);
  const size_t expected =
      2 + (has_c ? 1 : 0) + (fp8 ? 2 : 0) + (has_scale_d ? 1 : 0) + (has_bias ? 1 : 0);
  if (operands.size() != expected) {
    return InvalidArgument(
        "%s: %s with beta=%g, epilogue %s and output %s takes %zu operands (a, b%s%s%s%s), got %zu",
        instruction.NameForErrors().c_str(), instruction.custom_call_target().c_str(), config.beta,
        EpilogueName(config.epilogue), d_shape.ToString().c_str(), expected, has_c ? ", c" : "",
        fp8 ? ", a_scale, b_scale" : "", has_scale_d ? ", scale_d" : "", has_bias ? ", bias" : "",
        operands.size());
  }
  if (fp8 && config.damax_output &&
      (!shape.IsTuple() || shape.tuple_shapes_size() < 3 ||
       shape.tuple_shapes(1).element_type() != PrimitiveType::kF32 ||
       !shape.tuple_shapes(1).IsScalar())) {
    return InvalidArgument("%s: damax_output needs a result (D, f32[] amax, s8[workspace]), got %s",
                           instruction.NameForErrors().c_str(), shape.ToString().c_str());
  }
  size_t next = 0;
  FP8_ASSIGN_OR_RETURN(HostTensor a, OperandTensor(instruction, *operands[next++], "a"));
  FP8_ASSIGN_OR_RETURN(HostTensor b, OperandTensor(instruction, *operands[next++], "b"));
  HostTensor c, a_scale, b_scale, scale_d, bias;
  DotSpec spec;
  DotArguments arguments;
  arguments.lhs = &a;
  arguments.rhs = &b;
  if (has_c) {
    FP8_ASSIGN_OR_RETURN(c, OperandTensor(instruction, *operands[next++], "c"));
    arguments.c = &c;
  }
  if (fp8) {
    FP8_ASSIGN_OR_RETURN(a_scale, OperandTensor(instruction, *operands[next++], "a_scale"));
    FP8_ASSIGN_OR_RETURN(b_scale, OperandTensor(instruction, *operands[next++], "b_scale"));
    arguments.lhs_scale = &a_scale;
    arguments.rhs_scale = &b_scale;
    spec.lhs_scale = {ScaleMode::kTensor, a_scale.dims()};
    spec.rhs_scale = {ScaleMode::kTensor, b_scale.dims()};
  }
  if (has_scale_d) {
    FP8_ASSIGN_OR_RETURN(scale_d, OperandTensor(instruction, *operands[next++], "scale_d"));
    arguments.output_scale = &scale_d;
    spec.output_scale = true;
  }
  if (has_bias) {
    FP8_ASSIGN_OR_RETURN(bias, OperandTensor(instruction, *operands[next++], "bias"));
    arguments.bias = &bias;
  }
  spec.dimension_numbers = config.dot_dimension_numbers;
  spec.precision_config = config.precision_config;
  spec.output_type = d_type;
  spec.alpha = config.alpha_real;
  spec.beta = config.beta;
  spec.epilogue = config.epilogue;
  spec.compute_amax = fp8 && config.damax_output;
  spec = SpecFromArguments(arguments, spec);
  FP8_ASSIGN_OR_RETURN(DotResult result, interpreter.RunDot(instruction, spec, arguments));
  FP8_ASSIGN_OR_RETURN(Value d, OutputValue(instruction, result.output, d_shape));
  if (!shape.IsTuple()) return d;
  std::vector<Value> elements;
  elements.push_back(std::move(d));
  if (spec.compute_amax) {
    elements.push_back(Value::Scalar(PrimitiveType::kF32, result.amax.value_or(0.0)));
  }
  for (int64_t i = static_cast<int64_t>(elements.size()); i < shape.tuple_shapes_size(); ++i) {
    elements.push_back(Zeros(shape.tuple_shapes(i)));  // the cuBLASLt workspace
  }
  Value value = Value::Tuple(std::move(elements));
  value.shape = shape;  // keep the layouts as written
  return value;
}

}  // namespace internal
}  // namespace fp8dot::hlo
