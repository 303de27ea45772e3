// The HLO interpreter's op implementations (internal to src/hlo). Each takes the instruction (for
// its attributes, output shape and error messages) and the operand values, and returns the
// result rounded to the output's element type. Ops that call computations (reduce, scatter,
// call) and the dots live in interpreter.cc / interpreter_dot.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

#include "fp8dot/hlo/hlo_ir.h"
#include "fp8dot/hlo/interpreter.h"

namespace fp8dot::hlo::internal {

// ---- Element storage
// ----------------------------------------------------------------------------- Calls fn(out,
// in...) with the element vectors of `out` and `in...`: their `integers` when `out` holds
// pred/integers, else their `values`. The caller has checked that all hold the same kind, so one
// generic lambda serves both storages: fn(auto& out, const auto&... in).
template <typename Fn, typename... In>
void VisitElements(Fn&& fn, Value& out, const In&... in) {
  if (out.HoldsIntegers()) {
    fn(out.integers, in.integers...);
  } else {
    fn(out.values, in.values...);
  }
}

// Checks that each operand is an array of `type` with as many elements as `count`, so an op may
// index its storage as that of `type` (the verifier checks most ops' types, but not all: reverse).
Status CheckOperands(const HloInstruction& instruction,
                     std::initializer_list<const Value*> operands, PrimitiveType type,
                     int64_t count);

// Element i of an index operand (dynamic-slice starts, scatter indices) as an int64: a u64 index
// of 2^63 or more saturates to INT64_MAX, which is past every dim, as its true value is.
int64_t IndexAt(const Value& indices, size_t i);

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
// Whether the elementwise binary `opcode` is defined for `type` (no bitwise ops on floats, no
// atan2 on integers, no division, power or shifts on pred).
bool BinaryIsDefined(HloOpcode opcode, PrimitiveType type);
// One binary op on two elements of `type` (also for the reduce/scatter fast paths); the opcode
// must be elementwise binary and defined for the type (BinaryIsDefined). Floats: rounded to the
// type. Pred and integers (shape.h's form): exact, wrapped to the width.
double ApplyBinary(HloOpcode opcode, PrimitiveType type, double a, double b);
int64_t ApplyBinary(HloOpcode opcode, PrimitiveType type, int64_t a, int64_t b);

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
