// What a GEMM custom call (__cublas$lt$matmul$f8 / __cublas$lt$matmul) computes, read from the
// instruction alone: the DotSpec and which operand plays which role. Shared by the host
// interpreter and the device executor so both read the call the same way.
//
//   __cublas$lt$matmul$f8: operands a, b, [c if beta != 0], a_scale, b_scale, [scale_d if D is
//     FP8], [bias if the epilogue has BIAS]; result (D, [f32[] amax if damax_output], s8[ws]).
//   __cublas$lt$matmul:    operands a, b, [c if beta != 0], [bias]; result (D, s8[ws]) or D.
#pragma once

#include "fp8dot/dot_spec.h"
#include "fp8dot/hlo/hlo_ir.h"

namespace fp8dot::hlo {

struct GemmCall {
  DotSpec spec;   // tensor scales, C, bias, output scale and amax as the call asks
  Shape d_shape;  // the D element of the result
  // Operand index of each role; -1 when the call has none.
  int c = -1, a_scale = -1, b_scale = -1, scale_d = -1, bias = -1;
};

bool IsGemmCustomCall(const HloInstruction& instruction);
// Errors (wrong operand count, bad backend_config, non-float operands) name the instruction.
StatusOr<GemmCall> DescribeGemmCustomCall(const HloInstruction& instruction);

}  // namespace fp8dot::hlo
