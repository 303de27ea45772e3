// Dots and GEMM custom calls in the HLO interpreter: each becomes a DotSpec that runs on the
// chosen dot backend (HloInterpreter::RunDot), so the accumulation is whatever
// ResolveAccumulation decides for the operand types and the PrecisionConfig.
#include <string>

#include "fp8dot/hlo/gemm_backend_config.h"
#include "hlo/gemm_call.h"
#include "hlo/interpreter_ops.h"

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

}  // namespace

StatusOr<DotResult> HloInterpreter::RunDot(const HloInstruction& instruction, const DotSpec& spec,
                                           const DotArguments& arguments) {
  DotRunInfo run;
  StatusOr<DotResult> result =
      fp8dot::RunDot(options_.dot_backend, spec, arguments, options_.dot_options, &run);
  if (!result.ok()) return Prefixed(instruction, result.status());
  GemmRecord record;
  record.instruction = instruction.NameForErrors();
  record.problem =
      spec.lhs.ToString() + " x " + spec.rhs.ToString() + " -> " + DTypeName(spec.output_type);
  record.accumulation = result->accumulation;
  if (run.backend == Backend::kCuda) record.device_milliseconds = run.milliseconds;
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

// The GEMM custom calls (operand roles: gemm_call.h).
StatusOr<Value> EvalGemmCustomCall(HloInterpreter& interpreter, const HloInstruction& instruction,
                                   const std::vector<const Value*>& operands) {
  FP8_ASSIGN_OR_RETURN(GemmCall call, DescribeGemmCustomCall(instruction));
  const DotSpec& spec = call.spec;
  const Shape& shape = instruction.shape();
  const Shape& d_shape = call.d_shape;
  if (operands.size() != static_cast<size_t>(instruction.operand_count())) {
    return Internal("%s: %zu operand values for %lld operands", instruction.NameForErrors().c_str(),
                    operands.size(), static_cast<long long>(instruction.operand_count()));
  }
  HostTensor a, b, c, a_scale, b_scale, scale_d, bias;
  DotArguments arguments;
  FP8_ASSIGN_OR_RETURN(a, OperandTensor(instruction, *operands[0], "a"));
  FP8_ASSIGN_OR_RETURN(b, OperandTensor(instruction, *operands[1], "b"));
  arguments.lhs = &a;
  arguments.rhs = &b;
  auto role = [&](int index, const char* name, HostTensor& tensor,
                  const HostTensor*& slot) -> Status {
    if (index < 0) return OkStatus();
    FP8_ASSIGN_OR_RETURN(tensor,
                         OperandTensor(instruction, *operands[static_cast<size_t>(index)], name));
    slot = &tensor;
    return OkStatus();
  };
  FP8_RETURN_IF_ERROR(role(call.c, "c", c, arguments.c));
  FP8_RETURN_IF_ERROR(role(call.a_scale, "a_scale", a_scale, arguments.lhs_scale));
  FP8_RETURN_IF_ERROR(role(call.b_scale, "b_scale", b_scale, arguments.rhs_scale));
  FP8_RETURN_IF_ERROR(role(call.scale_d, "scale_d", scale_d, arguments.output_scale));
  FP8_RETURN_IF_ERROR(role(call.bias, "bias", bias, arguments.bias));
  FP8_ASSIGN_OR_RETURN(DotResult result, interpreter.RunDot(instruction, spec, arguments));
  FP8_ASSIGN_OR_RETURN(Value d, OutputValue(instruction, result.output, d_shape));
  if (!shape.IsTuple()) return d;
  std::vector<Value> elements;
  elements.push_back(std::move(d));
  if (spec.compute_amax) {
    elements.push_back(Value::Scalar(PrimitiveType::kF32, result.amax.value_or(0.0)));
  }
  for (int64_t i = static_cast<int64_t>(elements.size()); i < shape.tuple_shapes_size(); ++i) {
    elements.push_back(Value::Zeros(shape.tuple_shapes(i)));  // the cuBLASLt workspace
  }
  Value value = Value::Tuple(std::move(elements));
  value.shape = shape;  // keep the layouts as written
  return value;
}

}  // namespace internal
}  // namespace fp8dot::hlo
