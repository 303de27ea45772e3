// Opcode names (include/fp8dot/hlo/hlo_opcode.h).
#include "fp8dot/hlo/hlo_opcode.h"

namespace fp8dot::hlo {
namespace {

struct OpcodeName {
  HloOpcode opcode;
  const char* name;
};

constexpr OpcodeName kOpcodeNames[] = {
#define FP8DOT_HLO_OPCODE_NAME(name, spelling) {HloOpcode::name, spelling},
    FP8DOT_HLO_OPCODE_LIST(FP8DOT_HLO_OPCODE_NAME)
#undef FP8DOT_HLO_OPCODE_NAME
};

}  // namespace

const char* HloOpcodeString(HloOpcode opcode) {
  for (const OpcodeName& entry : kOpcodeNames) {
    if (entry.opcode == opcode) return entry.name;
  }
  return "?";
}

StatusOr<HloOpcode> StringToHloOpcode(std::string_view name) {
  for (const OpcodeName& entry : kOpcodeNames) {
    if (name == entry.name) return entry.opcode;
  }
  return InvalidArgument("unknown opcode '%.*s'", static_cast<int>(name.size()), name.data());
}

bool IsElementwiseUnary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAbs:
    case HloOpcode::kCbrt:
    case HloOpcode::kCeil:
    case HloOpcode::kClz:
    case HloOpcode::kCopy:
    case HloOpcode::kCos:
    case HloOpcode::kErf:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kFloor:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
    case HloOpcode::kPopulationCount:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSign:
    case HloOpcode::kSin:
    case HloOpcode::kSqrt:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAdd:
    case HloOpcode::kAnd:
    case HloOpcode::kAtan2:
    case HloOpcode::kDivide:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
    case HloOpcode::kOr:
    case HloOpcode::kPower:
    case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kSubtract:
    case HloOpcode::kXor:
      return true;
    default:
      return false;
  }
}

}  // namespace fp8dot::hlo
