#include "fp8dot/hlo/convert_round_trip_remover.h"

namespace fp8dot::hlo {

StatusOr<int64_t> RemoveConvertRoundTrips(HloModule* module) {
  int64_t removed = 0;
  for (HloComputation* computation : module->computations()) {
    for (HloInstruction* outer : computation->MakeInstructionPostOrder()) {
      if (outer->opcode() != HloOpcode::kConvert) continue;
      HloInstruction* inner = outer->mutable_operand(0);
      if (inner->opcode() != HloOpcode::kConvert) continue;
      HloInstruction* x = inner->mutable_operand(0);
      if (!Shape::Compatible(x->shape(), outer->shape())) continue;  // a real change of type
      FP8_RETURN_IF_ERROR(outer->ReplaceAllUsesWith(x));
      ++removed;
    }
    if (removed > 0) computation->RemoveDeadCode();
  }
  return removed;
}

}  // namespace fp8dot::hlo
