// The HLO interpreter's op implementations (internal to src/hlo). Each takes the instruction (for
// its attributes, output shape and error messages) and the operand values, and returns the
// result rounded to the output's element type. Ops that call computations (reduce, scatter,
// call) and the dots live in interpreter.cc / interpreter_dot.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "fp8dot/hlo/hlo_ir.h"
#include "fp8dot/hlo/interpreter.h"

namespace fp8dot::hlo::internal {

// ---- Index helpers ------------------------------------------------------------------------------
// Row-major strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// Calls fn(index, linear) for every multi-index of `dims` in row-major order.
void ForEachIndex(const std::vector<int64_t>& dims,
                  const std::function<void(const std::vector<int64_t>&, int64_t)>& fn);

// ---- Elementwise (interpreter_elementwise.cc) ---------------------------------------------------
StatusOr<Value> EvalUnary(const HloInstruction& instruction, const Value& operand);
StatusOr<Value> EvalBinary(const HloInstruction& instruction, const Value& lhs, const Value& rhs);
StatusOr<Value> EvalCompare(const HloInstruction& instruction, const Value& lhs, const Value& rhs);
StatusOr<Value> EvalConvert(const HloInstruction& instruction, const Value& operand);
StatusOr<Value> EvalSelect(const HloInstruction& instruction, const Value& pred,
                           const Value& on_true, const Value& on_false);
StatusOr<Value> EvalClamp(const HloInstruction& instruction, const Value& low, const Value& operand,
                          const Value& high);
StatusOr<Value> EvalReducePrecision(const HloInstruction& instruction, const Value& operand);
// One binary op on two scalars of `type` (for the reduce/scatter fast paths); opcode must be
// elementwise binary.
double ApplyBinary(HloOpcode opcode, PrimitiveType type, double a, double b);

// ---- Data movement (interpreter_shape_ops.cc) --------------------------------------------------
StatusOr<Value> EvalBroadcast(const HloInstruction& instruction, const Value& operand);
StatusOr<Value> EvalReshape(const HloInstruction& instruction, const Value& operand);
StatusOr<Value> EvalBitcast(const HloInstruction& instruction, const Value& operand);
StatusOr<Value> EvalTranspose(const HloInstruction& instruction, const Value& operand);
StatusOr<Value> EvalSlice(const HloInstruction& instruction, const Value& operand);
StatusOr<Value> EvalDynamicSlice(const HloInstruction& instruction,
                                 const std::vector<const Value*>& operands);
StatusOr<Value> EvalDynamicUpdateSlice(const HloInstruction& instruction,
                                       const std::vector<const Value*>& operands);
StatusOr<Value> EvalConcatenate(const HloInstruction& instruction,
                                const std::vector<const Value*>& operands);
StatusOr<Value> EvalPad(const HloInstruction& instruction, const Value& operand,
                        const Value& padding_value);
StatusOr<Value> EvalIota(const HloInstruction& instruction);
StatusOr<Value> EvalReverse(const HloInstruction& instruction, const Value& operand);

// ---- Dots (interpreter_dot.cc) -----------------------------------------------------------------
StatusOr<Value> EvalDot(HloInterpreter& interpreter, const HloInstruction& instruction,
                        const Value& lhs, const Value& rhs);
// __cublas$lt$matmul$f8 and __cublas$lt$matmul.
StatusOr<Value> EvalGemmCustomCall(HloInterpreter& interpreter, const HloInstruction& instruction,
                                   const std::vector<const Value*>& operands);

}  // namespace fp8dot::hlo::internal
