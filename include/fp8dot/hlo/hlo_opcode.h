// HloOpcode: every op the parser accepts, with its HLO spelling ("get-tuple-element", ...).
// The parser knows more opcodes than the verifier and the interpreter implement; those still
// parse, print and round-trip, and later stages report them as unsupported by name.
#pragma once

#include <string_view>

#include "fp8dot/status.h"

namespace fp8dot::hlo {

// V(enum name, HLO spelling)
#define FP8DOT_HLO_OPCODE_LIST(V)                      \
  V(kAbs, "abs")                                       \
  V(kAdd, "add")                                       \
  V(kAfterAll, "after-all")                            \
  V(kAllGather, "all-gather")                          \
  V(kAllReduce, "all-reduce")                          \
  V(kAllToAll, "all-to-all")                           \
  V(kAnd, "and")                                       \
  V(kAtan2, "atan2")                                   \
  V(kBitcast, "bitcast")                               \
  V(kBitcastConvert, "bitcast-convert")                \
  V(kBroadcast, "broadcast")                           \
  V(kCall, "call")                                     \
  V(kCbrt, "cbrt")                                     \
  V(kCeil, "ceil")                                     \
  V(kCholesky, "cholesky")                             \
  V(kClamp, "clamp")                                   \
  V(kClz, "count-leading-zeros")                       \
  V(kCollectivePermute, "collective-permute")          \
  V(kCompare, "compare")                               \
  V(kConcatenate, "concatenate")                       \
  V(kConditional, "conditional")                       \
  V(kConstant, "constant")                             \
  V(kConvert, "convert")                               \
  V(kConvolution, "convolution")                       \
  V(kCopy, "copy")                                     \
  V(kCos, "cosine")                                    \
  V(kCustomCall, "custom-call")                        \
  V(kDivide, "divide")                                 \
  V(kDot, "dot")                                       \
  V(kDynamicReshape, "dynamic-reshape")                \
  V(kDynamicSlice, "dynamic-slice")                    \
  V(kDynamicUpdateSlice, "dynamic-update-slice")       \
  V(kErf, "erf")                                       \
  V(kExp, "exponential")                               \
  V(kExpm1, "exponential-minus-one")                   \
  V(kFft, "fft")                                       \
  V(kFloor, "floor")                                   \
  V(kFusion, "fusion")                                 \
  V(kFusionStart, "fusion-start")                      \
  V(kFusionDone, "fusion-done")                        \
  V(kGather, "gather")                                 \
  V(kGetDimensionSize, "get-dimension-size")           \
  V(kGetTupleElement, "get-tuple-element")             \
  V(kImag, "imag")                                     \
  V(kInfeed, "infeed")                                 \
  V(kIota, "iota")                                     \
  V(kIsFinite, "is-finite")                            \
  V(kLog, "log")                                       \
  V(kLog1p, "log-plus-one")                            \
  V(kLogistic, "logistic")                             \
  V(kMap, "map")                                       \
  V(kMaximum, "maximum")                               \
  V(kMinimum, "minimum")                               \
  V(kMultiply, "multiply")                             \
  V(kNegate, "negate")                                 \
  V(kNot, "not")                                       \
  V(kOptimizationBarrier, "opt-barrier")               \
  V(kOr, "or")                                         \
  V(kOutfeed, "outfeed")                               \
  V(kPad, "pad")                                       \
  V(kParameter, "parameter")                           \
  V(kPartitionId, "partition-id")                      \
  V(kPopulationCount, "popcnt")                        \
  V(kPower, "power")                                   \
  V(kReal, "real")                                     \
  V(kReduce, "reduce")                                 \
  V(kReducePrecision, "reduce-precision")              \
  V(kReduceScatter, "reduce-scatter")                  \
  V(kReduceWindow, "reduce-window")                    \
  V(kRemainder, "remainder")                           \
  V(kReplicaId, "replica-id")                          \
  V(kReshape, "reshape")                               \
  V(kReverse, "reverse")                               \
  V(kRng, "rng")                                       \
  V(kRngBitGenerator, "rng-bit-generator")             \
  V(kRngGetAndUpdateState, "rng-get-and-update-state") \
  V(kRoundNearestAfz, "round-nearest-afz")             \
  V(kRoundNearestEven, "round-nearest-even")           \
  V(kRsqrt, "rsqrt")                                   \
  V(kScatter, "scatter")                               \
  V(kSelect, "select")                                 \
  V(kSelectAndScatter, "select-and-scatter")           \
  V(kShiftLeft, "shift-left")                          \
  V(kShiftRightArithmetic, "shift-right-arithmetic")   \
  V(kShiftRightLogical, "shift-right-logical")         \
  V(kSign, "sign")                                     \
  V(kSin, "sine")                                      \
  V(kSlice, "slice")                                   \
  V(kSort, "sort")                                     \
  V(kSqrt, "sqrt")                                     \
  V(kStochasticConvert, "stochastic-convert")          \
  V(kSubtract, "subtract")                             \
  V(kTan, "tan")                                       \
  V(kTanh, "tanh")                                     \
  V(kTopK, "topk")                                     \
  V(kTranspose, "transpose")                           \
  V(kTriangularSolve, "triangular-solve")              \
  V(kTuple, "tuple")                                   \
  V(kWhile, "while")                                   \
  V(kXor, "xor")

enum class HloOpcode {
#define FP8DOT_HLO_OPCODE_ENUM(name, spelling) name,
  FP8DOT_HLO_OPCODE_LIST(FP8DOT_HLO_OPCODE_ENUM)
#undef FP8DOT_HLO_OPCODE_ENUM
};

// "get-tuple-element".
const char* HloOpcodeString(HloOpcode opcode);
// The exact HLO spelling; INVALID_ARGUMENT "unknown opcode 'x'" otherwise.
StatusOr<HloOpcode> StringToHloOpcode(std::string_view name);

// Elementwise ops with one operand whose result has the operand's shape (abs, exponential, not,
// ...). is-finite is elementwise too but yields pred; see IsElementwiseUnary's callers.
bool IsElementwiseUnary(HloOpcode opcode);
// Elementwise ops with two operands of one shape (add ... xor, shifts, atan2); not compare.
bool IsElementwiseBinary(HloOpcode opcode);

}  // namespace fp8dot::hlo
