#include "fp8dot/hlo/fp8_gemm_rewriter.h"

#include "fp8dot/hlo/gemm_backend_config.h"
#include "hlo/passes/patterns.h"

namespace fp8dot::hlo {
namespace {

using patterns::Dequantization;
using patterns::EpilogueDepth;
using patterns::GemmEpilogue;

TensorSpec SpecOf(const Shape& shape, DType type) {
  return {type, shape.dimensions(), shape.minor_to_major()};
}

std::optional<DType> FloatDType(const HloInstruction* instruction) {
  if (!instruction->shape().IsArray()) return std::nullopt;
  return ToDType(instruction->shape().element_type());
}

// The DotSpec the fused GEMM would execute, for validation before anything changes.
StatusOr<DotSpec> FusedSpec(const HloInstruction* dot, const Dequantization& a,
                            const Dequantization& b, const GemmEpilogue& epilogue) {
  DotSpec spec;
  spec.lhs = SpecOf(dot->operand(0)->shape(), *ToDType(a.fp8->shape().element_type()));
  spec.rhs = SpecOf(dot->operand(1)->shape(), *ToDType(b.fp8->shape().element_type()));
  spec.dimension_numbers = dot->dot_dimension_numbers();
  spec.precision_config = dot->precision_config();
  const HloInstruction* output = patterns::GemmResult(epilogue);
  std::optional<DType> output_type = FloatDType(output);
  if (!output_type) return InvalidArgument("the dot's output type is not a float type");
  spec.output_type = *output_type;
  spec.lhs_scale = {ScaleMode::kTensor, {}};
  spec.rhs_scale = {ScaleMode::kTensor, {}};
  spec.alpha = epilogue.alpha;
  if (epilogue.matrix_bias != nullptr) {
    std::optional<DType> c_type = FloatDType(epilogue.matrix_bias);
    if (!c_type) return InvalidArgument("the matrix bias is not a float array");
    spec.c = SpecOf(epilogue.matrix_bias->shape(), *c_type);
    spec.beta = 1.0;
  }
  if (epilogue.vector_bias != nullptr) {
    std::optional<DType> bias_type = FloatDType(epilogue.vector_bias);
    if (!bias_type) return InvalidArgument("the bias is not a float array");
    spec.bias = TensorSpec{*bias_type, epilogue.vector_bias->shape().dimensions(), {}};
  }
  spec.epilogue = patterns::EpilogueKind(epilogue);
  spec.output_scale = epilogue.quantized != nullptr;
  spec.compute_amax = epilogue.amax != nullptr;
  FP8_RETURN_IF_ERROR(ValidateDotSpec(spec).status());
  return spec;
}

HloInstruction* AddScalarConstant(HloComputation* computation, PrimitiveType type, double value) {
  return computation->AddInstruction(HloInstruction::CreateConstant(Literal::Scalar(type, value)));
}

// The FP8 value with the operand's data movement re-applied on it, in FP8.
HloInstruction* MoveInFp8(HloComputation* computation, const Dequantization& operand) {
  const PrimitiveType fp8_type = operand.fp8->shape().element_type();
  HloInstruction* current = operand.fp8;
  for (const HloInstruction* op : operand.movement) {
    Shape shape = op->shape();
    shape.set_element_type(fp8_type);
    std::vector<HloInstruction*> operands = op->operands();
    operands[0] = current;
    if (op->opcode() == HloOpcode::kPad)
      operands[1] = AddScalarConstant(computation, fp8_type, 0.0);
    auto moved = HloInstruction::Create(op->opcode(), shape, operands);
    if (op->has_dimensions()) moved->set_dimensions(op->dimensions());
    *moved->mutable_slice() = op->slice();
    *moved->mutable_padding() = op->padding();
    *moved->mutable_dynamic_slice_sizes() = op->dynamic_slice_sizes();
    current = computation->AddInstruction(std::move(moved));
  }
  return current;
}

// An f32[] scalar for the custom call: 1 when absent, 1/s when the HLO divided by s. `scale` may
// be any float type and f32[1]-shaped (Flax).
HloInstruction* ScaleOperand(HloComputation* computation, HloInstruction* scale, bool divides) {
  const Shape f32_scalar = Shape::MakeScalar(PrimitiveType::kF32);
  if (scale == nullptr) return AddScalarConstant(computation, PrimitiveType::kF32, 1.0);
  if (scale->shape().rank() != 0) {
    Shape scalar = Shape::MakeScalar(scale->shape().element_type());
    scale = computation->AddInstruction(HloInstruction::CreateReshape(scalar, scale));
  }
  if (scale->shape().element_type() != PrimitiveType::kF32) {
    scale = computation->AddInstruction(HloInstruction::CreateConvert(f32_scalar, scale));
  }
  if (!divides) return scale;
  HloInstruction* one = AddScalarConstant(computation, PrimitiveType::kF32, 1.0);
  return computation->AddInstruction(
      HloInstruction::CreateBinary(f32_scalar, HloOpcode::kDivide, one, scale));
}

}  // namespace

StatusOr<bool> Fp8GemmRewriter::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->computations()) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != HloOpcode::kDot) continue;
      FP8_ASSIGN_OR_RETURN(bool rewritten, RewriteDot(instruction));
      changed |= rewritten;
    }
    if (changed) computation->RemoveDeadCode();
  }
  return changed;
}

StatusOr<bool> Fp8GemmRewriter::RewriteDot(HloInstruction* dot) {
  std::string why_a, why_b;
  std::optional<Dequantization> a = patterns::MatchDequantization(dot->mutable_operand(0), &why_a);
  std::optional<Dequantization> b = patterns::MatchDequantization(dot->mutable_operand(1), &why_b);
  auto near_miss = [&](const std::string& reason) {
    near_misses_.push_back(dot->NameForErrors() + ": stays a dot: " + reason);
    return false;
  };
  if (!a && !b) return false;  // not an FP8 dot at all: nothing to report
  if (!a) return near_miss("lhs: " + why_a);
  if (!b) return near_miss("rhs: " + why_b);
  const DType a_type = *ToDType(a->fp8->shape().element_type());
  const DType b_type = *ToDType(b->fp8->shape().element_type());
  if (!IsNativeFp8Pair(a_type, b_type)) {
    return near_miss(std::string(DTypeName(a_type)) + " x " + DTypeName(b_type) +
                     " has no cuBLASLt FP8 GEMM (it runs as the dot it is)");
  }

  // The deepest epilogue that still makes a valid DotSpec.
  GemmEpilogue epilogue;
  std::string rejected;
  bool valid = false;
  for (EpilogueDepth depth : {EpilogueDepth::kQuantization, EpilogueDepth::kActivation,
                              EpilogueDepth::kBias, EpilogueDepth::kAlpha, EpilogueDepth::kNone}) {
    epilogue = patterns::MatchGemmEpilogue(dot, depth);
    StatusOr<DotSpec> spec = FusedSpec(dot, *a, *b, epilogue);
    if (spec.ok()) {
      valid = true;
      break;
    }
    if (rejected.empty()) rejected = spec.status().message();
  }
  if (!valid) return near_miss(rejected);
  if (!rejected.empty()) {
    near_misses_.push_back(dot->NameForErrors() + ": fused with a shorter epilogue: " + rejected);
  }

  HloComputation* computation = dot->parent();
  std::vector<HloInstruction*> operands = {MoveInFp8(computation, *a), MoveInFp8(computation, *b)};
  if (epilogue.matrix_bias != nullptr) operands.push_back(epilogue.matrix_bias);
  operands.push_back(ScaleOperand(computation, a->scale, a->scale_divides));
  operands.push_back(ScaleOperand(computation, b->scale, b->scale_divides));
  if (epilogue.quantized != nullptr) {
    // scale_d multiplies D: 1/s for clamp(D / s), s for clamp(D * s).
    operands.push_back(
        ScaleOperand(computation, epilogue.output_scale, epilogue.output_scale_divides));
  }
  if (epilogue.vector_bias != nullptr) operands.push_back(epilogue.vector_bias);

  HloInstruction* result = patterns::GemmResult(epilogue);
  std::vector<Shape> outputs = {result->shape()};
  if (epilogue.amax != nullptr) outputs.push_back(Shape::MakeScalar(PrimitiveType::kF32));
  outputs.push_back(Shape::MakeArray(PrimitiveType::kS8, {0}));

  GemmBackendConfig config;
  config.alpha_real = epilogue.alpha;
  config.beta = epilogue.matrix_bias != nullptr ? 1.0 : 0.0;
  config.dot_dimension_numbers = dot->dot_dimension_numbers();
  config.precision_config = dot->precision_config();
  config.epilogue = patterns::EpilogueKind(epilogue);
  config.damax_output = epilogue.amax != nullptr;

  HloInstruction* gemm = computation->AddInstruction(HloInstruction::CreateCustomCall(
      Shape::MakeTuple(outputs), operands, kCublasLtMatmulF8Target, config.ToJson()));
  HloInstruction* d = computation->AddInstruction(HloInstruction::CreateGetTupleElement(gemm, 0));
  FP8_RETURN_IF_ERROR(result->ReplaceAllUsesWith(d));
  if (epilogue.amax != nullptr) {
    HloInstruction* amax =
        computation->AddInstruction(HloInstruction::CreateGetTupleElement(gemm, 1));
    if (epilogue.amax->shape().element_type() != PrimitiveType::kF32) {
      amax =
          computation->AddInstruction(HloInstruction::CreateConvert(epilogue.amax->shape(), amax));
    }
    FP8_RETURN_IF_ERROR(epilogue.amax->ReplaceAllUsesWith(amax));
  }
  return true;
}

}  // namespace fp8dot::hlo
