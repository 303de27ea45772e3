// The HLO verifier: infers each instruction's shape from its operands and attributes and checks
// it against the declared shape; also checks the module's structure (entry, roots, parameters).
#pragma once

#include "fp8dot/hlo/hlo_ir.h"
#include "fp8dot/status.h"

namespace fp8dot::hlo {

// OK, or INVALID_ARGUMENT naming the first bad instruction and its line, e.g.
//   "%add.3 (line 7): operands have different shapes: f32[2,3]{1,0} vs f32[3,2]{1,0}".
// Opcodes without shape rules here (convolution, gather, while, ...) are only checked
// structurally (operands exist); custom-call may have any shape.
Status VerifyHloModule(const HloModule& module);
Status VerifyHloComputation(const HloComputation& computation);
// Checks one instruction's shape against its operands and attributes.
Status VerifyHloInstruction(const HloInstruction& instruction);

}  // namespace fp8dot::hlo
