#include "hlo/passes/patterns.h"

#include <algorithm>
#include <cmath>

namespace fp8dot::hlo::patterns {
namespace {

bool Is(const HloInstruction* instruction, HloOpcode opcode) {
  return instruction != nullptr && instruction->opcode() == opcode;
}

// A single float value: f32[] or f32[1] (Flax's scale shape).
bool IsFloatScalar(const HloInstruction* instruction) {
  return instruction != nullptr && instruction->shape().IsArray() &&
         instruction->shape().ElementCount() == 1 &&
         IsFloatingPointType(instruction->shape().element_type());
}

// The only user of `instruction`, or nullptr.
HloInstruction* OnlyUser(const HloInstruction* instruction) {
  return instruction->user_count() == 1 ? instruction->users()[0] : nullptr;
}

// The operand of a binary `op` that is not `known`, or nullptr when `known` is not an operand.
HloInstruction* OtherOperand(HloInstruction* op, const HloInstruction* known) {
  if (op->operand_count() != 2) return nullptr;
  if (op->operand(0) == known) return op->mutable_operand(1);
  if (op->operand(1) == known) return op->mutable_operand(0);
  return nullptr;
}

// reduce(abs(d), init, to_apply=maximum): the computation's root is maximum(p0, p1).
bool IsMaxReduceOfAbs(const HloInstruction* reduce, const HloInstruction* d) {
  if (!Is(reduce, HloOpcode::kReduce) || reduce->operand_count() != 2) return false;
  const HloInstruction* abs = reduce->operand(0);
  if (!Is(abs, HloOpcode::kAbs) || abs->operand(0) != d || abs->user_count() != 1) return false;
  if (!reduce->shape().IsArray() || reduce->shape().rank() != 0) return false;
  const HloComputation* to_apply = reduce->to_apply();
  return to_apply != nullptr && Is(to_apply->root_instruction(), HloOpcode::kMaximum);
}

// Number of output dims that belong to the rhs free dims (the trailing ones).
int64_t RhsFreeDimCount(const HloInstruction* dot) {
  const DotDimensionNumbers& dnums = dot->dot_dimension_numbers();
  return dot->operand(1)->shape().rank() - static_cast<int64_t>(dnums.rhs_batch_dimensions.size()) -
         static_cast<int64_t>(dnums.rhs_contracting_dimensions.size());
}

// add(d, broadcast(v)) with v spanning exactly the output's rhs free dims: v.
HloInstruction* MatchVectorBias(const HloInstruction* dot, HloInstruction* broadcast) {
  if (!Is(broadcast, HloOpcode::kBroadcast)) return nullptr;
  HloInstruction* v = broadcast->mutable_operand(0);
  const int64_t rank = broadcast->shape().rank();
  const int64_t free = RhsFreeDimCount(dot);
  if (free <= 0 || v->shape().rank() != free) return nullptr;
  for (int64_t i = 0; i < free; ++i) {
    if (broadcast->dimensions(i) != rank - free + i) return nullptr;
  }
  return v;
}

// clip := clamp(lo, x, hi) | minimum(maximum(x, lo), hi) | maximum(minimum(x, hi), lo), with
// the operands of minimum/maximum in either order. Fills lo/hi and returns true when `clip` is
// one of those applied to `x`.
bool MatchClip(const HloInstruction* clip, const HloInstruction* x, const HloInstruction** lo,
               const HloInstruction** hi) {
  if (Is(clip, HloOpcode::kClamp)) {
    if (clip->operand(1) != x) return false;
    *lo = clip->operand(0);
    *hi = clip->operand(2);
    return true;
  }
  const bool outer_min = Is(clip, HloOpcode::kMinimum);
  if (!outer_min && !Is(clip, HloOpcode::kMaximum)) return false;
  const HloOpcode inner_opcode = outer_min ? HloOpcode::kMaximum : HloOpcode::kMinimum;
  for (int64_t i = 0; i < 2; ++i) {
    const HloInstruction* inner = clip->operand(i);
    if (!Is(inner, inner_opcode)) continue;
    for (int64_t j = 0; j < 2; ++j) {
      if (inner->operand(j) != x) continue;
      const HloInstruction* inner_bound = inner->operand(1 - j);
      const HloInstruction* outer_bound = clip->operand(1 - i);
      *lo = outer_min ? inner_bound : outer_bound;
      *hi = outer_min ? outer_bound : inner_bound;
      return true;
    }
  }
  return false;
}

// The parameter number behind broadcasts/converts, or -1.
int64_t ParameterBehind(const HloInstruction* operand) {
  while (Is(operand, HloOpcode::kBroadcast) || Is(operand, HloOpcode::kConvert)) {
    operand = operand->operand(0);
  }
  return Is(operand, HloOpcode::kParameter) ? operand->parameter_number() : -1;
}

// The computation jnp.clip calls: (x, lo, hi) -> clip of parameter 0 between parameters 1, 2.
bool IsClipComputation(const HloComputation* computation) {
  if (computation == nullptr || computation->num_parameters() != 3) return false;
  const HloInstruction* x = computation->parameter_instruction(0);
  const HloInstruction* lo = nullptr;
  const HloInstruction* hi = nullptr;
  return MatchClip(computation->root_instruction(), x, &lo, &hi) && ParameterBehind(lo) == 1 &&
         ParameterBehind(hi) == 2;
}

// convert<f8>(clip(d op broadcast(s), -max, max)), op in {divide, multiply}, the clip written
// inline or as jnp.clip's call; fills epilogue.output_scale/output_scale_divides/quantized.
bool MatchQuantization(HloInstruction* d, HloInstruction* scaled, GemmEpilogue* epilogue) {
  const bool divides = Is(scaled, HloOpcode::kDivide);
  if (!divides && !Is(scaled, HloOpcode::kMultiply)) return false;
  if (divides && scaled->operand(0) != d) return false;
  HloInstruction* scale_operand = OtherOperand(scaled, d);
  HloInstruction* scale = scale_operand == nullptr ? nullptr : StripToScalar(scale_operand);
  if (scale == nullptr || !IsFloatScalar(scale)) return false;
  const HloInstruction* low_operand = nullptr;
  const HloInstruction* high_operand = nullptr;
  HloInstruction* clipped = OnlyUser(scaled);
  if (clipped == nullptr) return false;
  if (Is(clipped, HloOpcode::kCall)) {
    if (clipped->operand_count() != 3 || clipped->operand(0) != scaled ||
        !IsClipComputation(clipped->to_apply())) {
      return false;
    }
    low_operand = clipped->operand(1);  // call(x, lo, hi), to_apply=clip
    high_operand = clipped->operand(2);
  } else if (!MatchClip(clipped, scaled, &low_operand, &high_operand)) {
    // minimum(maximum(x, lo), hi) spans two instructions: the outer one is the inner's user.
    HloInstruction* outer = OnlyUser(clipped);
    if (outer == nullptr || !MatchClip(outer, scaled, &low_operand, &high_operand)) return false;
    clipped = outer;
  }
  HloInstruction* convert = OnlyUser(clipped);
  if (!Is(convert, HloOpcode::kConvert) || !IsFp8(convert)) return false;
  const std::optional<DType> fp8 = ToDType(convert->shape().element_type());
  const std::optional<double> low = ScalarConstantValue(low_operand);
  const std::optional<double> high = ScalarConstantValue(high_operand);
  const double max = DTypeMaxFinite(*fp8);
  if (!low || !high || *low != -max || *high != max) return false;
  epilogue->output_scale = scale;
  epilogue->output_scale_divides = divides;
  epilogue->quantized = convert;
  return true;
}

// The operand of commutative `op` (of `opcode`) that is not matched by `matches`, when the
// other one is; nullptr otherwise.
template <typename Predicate>
HloInstruction* OtherThan(HloInstruction* op, HloOpcode opcode, const Predicate& matches) {
  if (!Is(op, opcode) || op->operand_count() != 2) return nullptr;
  if (matches(op->operand(0))) return op->mutable_operand(1);
  if (matches(op->operand(1))) return op->mutable_operand(0);
  return nullptr;
}

auto ConstantNear(double value) {
  return [value](const HloInstruction* instruction) {
    const std::optional<double> c = ScalarConstantValue(instruction);
    return c.has_value() && std::fabs(*c - value) <= 1e-4 * std::fabs(value);
  };
}

// gelu := d * (0.5 * (1 + tanh(0.7978846 * (d + 0.044715 * d^3)))), d^3 = d * (d * d); every
// intermediate has one user and every user of d belongs to the pattern. Returns the final
// multiply, or nullptr.
HloInstruction* MatchGeluTanh(HloInstruction* d) {
  auto is_d = [d](const HloInstruction* x) { return x == d; };
  for (HloInstruction* out : d->users()) {
    HloInstruction* cdf = OtherThan(out, HloOpcode::kMultiply, is_d);
    HloInstruction* one_plus =
        cdf ? OtherThan(cdf, HloOpcode::kMultiply, ConstantNear(0.5)) : nullptr;
    HloInstruction* tanh =
        one_plus ? OtherThan(one_plus, HloOpcode::kAdd, ConstantNear(1.0)) : nullptr;
    if (!Is(tanh, HloOpcode::kTanh)) continue;
    HloInstruction* sum =
        OtherThan(tanh->mutable_operand(0), HloOpcode::kMultiply, ConstantNear(0.7978845608028654));
    HloInstruction* scaled_cube = sum ? OtherThan(sum, HloOpcode::kAdd, is_d) : nullptr;
    HloInstruction* cube =
        scaled_cube ? OtherThan(scaled_cube, HloOpcode::kMultiply, ConstantNear(0.044715))
                    : nullptr;
    HloInstruction* square = cube ? OtherThan(cube, HloOpcode::kMultiply, is_d) : nullptr;
    if (!Is(square, HloOpcode::kMultiply) || square->operand(0) != d || square->operand(1) != d)
      continue;
    const HloInstruction* single_users[] = {cdf, one_plus,    tanh, tanh->operand(0),
                                            sum, scaled_cube, cube, square};
    bool private_chain = true;
    for (const HloInstruction* x : single_users) private_chain &= x->user_count() == 1;
    for (const HloInstruction* user : d->users()) {
      private_chain &= user == out || user == sum || user == cube || user == square;
    }
    if (private_chain) return out;
  }
  return nullptr;
}

}  // namespace

Epilogue EpilogueKind(const GemmEpilogue& epilogue) {
  const bool bias = epilogue.vector_bias != nullptr;
  if (epilogue.relu) return bias ? Epilogue::kBiasRelu : Epilogue::kRelu;
  if (epilogue.gelu) return bias ? Epilogue::kBiasGelu : Epilogue::kGelu;
  return bias ? Epilogue::kBias : Epilogue::kDefault;
}

bool IsFp8(const HloInstruction* instruction) {
  return instruction != nullptr && instruction->shape().IsArray() &&
         IsFp8Type(instruction->shape().element_type());
}

bool IsScalarArray(const HloInstruction* instruction) {
  return instruction != nullptr && instruction->shape().IsArray() &&
         instruction->shape().rank() == 0;
}

HloInstruction* StripToScalar(HloInstruction* instruction) {
  // Broadcasts, reshapes and converts of one element hold that element everywhere. Flax keeps
  // its scales as f32[1]: broadcast(reshape(broadcast(f32[1] s), dims={1}), dims={0}).
  while (instruction != nullptr && instruction->shape().IsArray()) {
    if (instruction->shape().ElementCount() == 1) return instruction;
    if (!Is(instruction, HloOpcode::kBroadcast) && !Is(instruction, HloOpcode::kReshape) &&
        !Is(instruction, HloOpcode::kBitcast) && !Is(instruction, HloOpcode::kConvert)) {
      return nullptr;
    }
    instruction = instruction->mutable_operand(0);
  }
  return nullptr;
}

std::optional<double> ScalarConstantValue(const HloInstruction* instruction) {
  while (instruction != nullptr &&
         (Is(instruction, HloOpcode::kBroadcast) || Is(instruction, HloOpcode::kConvert) ||
          Is(instruction, HloOpcode::kReshape) || Is(instruction, HloOpcode::kBitcast))) {
    instruction = instruction->operand(0);
  }
  if (!Is(instruction, HloOpcode::kConstant) || instruction->literal().element_count() != 1) {
    return std::nullopt;
  }
  const Literal& literal = instruction->literal();
  const PrimitiveType type = literal.shape.element_type();
  return IsPredOrIntegralType(type) ? IntegerToDouble(literal.integers[0], type)
                                    : literal.values[0];
}

bool IsDataMovement(const HloInstruction* instruction) {
  switch (instruction->opcode()) {
    case HloOpcode::kBitcast:
    case HloOpcode::kBroadcast:
    case HloOpcode::kCopy:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
      return true;
    case HloOpcode::kPad: {
      const std::optional<double> value = ScalarConstantValue(instruction->operand(1));
      return value.has_value() && *value == 0.0;
    }
    default:
      return false;
  }
}

std::optional<Dequantization> MatchDequantization(HloInstruction* operand, std::string* why) {
  Dequantization match;
  HloInstruction* current = operand;
  // movement*: collected dot-side first, reversed at the end.
  while (!IsFp8(current) && IsDataMovement(current) && current->user_count() == 1) {
    match.movement.push_back(current);
    current = current->mutable_operand(0);
  }
  std::reverse(match.movement.begin(), match.movement.end());
  if (IsFp8(current)) {  // dot(f8, ...) directly, or after data movement
    match.fp8 = current;
    return match;
  }
  HloInstruction* convert = current;
  if (Is(current, HloOpcode::kMultiply) || Is(current, HloOpcode::kDivide)) {
    match.scale_divides = Is(current, HloOpcode::kDivide);
    for (int64_t i = 0; i < 2; ++i) {
      HloInstruction* candidate = current->mutable_operand(i);
      HloInstruction* other = current->mutable_operand(1 - i);
      if (match.scale_divides && i == 1) break;  // only convert(fp8) / s
      if (Is(candidate, HloOpcode::kConvert) && IsFp8(candidate->operand(0))) {
        HloInstruction* scale = StripToScalar(other);
        if (scale != nullptr && IsFloatScalar(scale)) {
          convert = candidate;
          match.scale = scale;
        }
        break;
      }
    }
    if (match.scale == nullptr) {
      *why = "operand " + operand->name() + " is not convert(fp8) times or divided by a scalar";
      return std::nullopt;
    }
  }
  if (!Is(convert, HloOpcode::kConvert) || !IsFp8(convert->operand(0))) {
    *why = "operand " + operand->name() + " is not FP8 data (no convert from an FP8 type)";
    return std::nullopt;
  }
  if (convert->user_count() != 1) {
    *why = "the dequantised value " + convert->name() + " has other users";
    return std::nullopt;
  }
  match.fp8 = convert->mutable_operand(0);
  return match;
}

GemmEpilogue MatchGemmEpilogue(HloInstruction* dot, EpilogueDepth depth) {
  GemmEpilogue epilogue;
  HloInstruction* d = dot;
  HloInstruction* user = OnlyUser(d);
  // alpha := multiply(d, broadcast(constant c))
  if (depth >= EpilogueDepth::kAlpha && Is(user, HloOpcode::kMultiply)) {
    HloInstruction* other = OtherOperand(user, d);
    const std::optional<double> c = other ? ScalarConstantValue(other) : std::nullopt;
    if (c.has_value() && std::isfinite(*c)) {
      epilogue.alpha = *c;
      d = user;
      user = OnlyUser(d);
    }
  }
  // bias := add(d, broadcast(v)) | add(d, C)
  if (depth >= EpilogueDepth::kBias && Is(user, HloOpcode::kAdd)) {
    HloInstruction* other = OtherOperand(user, d);
    if (other != nullptr && other != d) {
      if (HloInstruction* v = MatchVectorBias(dot, other)) {
        epilogue.vector_bias = v;
      } else if (Shape::Compatible(other->shape(), d->shape()) &&
                 !Is(other, HloOpcode::kBroadcast)) {
        epilogue.matrix_bias = other;
      }
      if (epilogue.vector_bias != nullptr || epilogue.matrix_bias != nullptr) {
        d = user;
        user = OnlyUser(d);
      }
    }
  }
  // relu := maximum(d, broadcast(constant 0))
  if (depth >= EpilogueDepth::kActivation && Is(user, HloOpcode::kMaximum)) {
    HloInstruction* other = OtherOperand(user, d);
    const std::optional<double> zero = other ? ScalarConstantValue(other) : std::nullopt;
    if (zero.has_value() && *zero == 0.0) {
      epilogue.relu = true;
      d = user;
    }
  }
  if (depth >= EpilogueDepth::kActivation && !epilogue.relu) {
    if (HloInstruction* gelu = MatchGeluTanh(d)) {
      epilogue.gelu = true;
      d = gelu;
    }
  }
  epilogue.last = d;
  // quant (+ amax): d's users are the quantisation and, optionally, reduce(abs(d), max).
  if (depth >= EpilogueDepth::kQuantization && (d->user_count() == 1 || d->user_count() == 2)) {
    HloInstruction* amax = nullptr;
    HloInstruction* scaled = nullptr;
    for (HloInstruction* u : d->users()) {
      if (Is(u, HloOpcode::kAbs) && u->user_count() == 1 && IsMaxReduceOfAbs(u->users()[0], d)) {
        amax = u->users()[0];
      } else {
        scaled = u;
      }
    }
    GemmEpilogue quantized = epilogue;
    if (scaled != nullptr && MatchQuantization(d, scaled, &quantized)) {
      quantized.amax = amax;
      return quantized;
    }
    // out := convert<bf16|f16>(d): the GEMM writes the narrower type itself. cuBLASLt rounds its
    // f32 result to D's type once, exactly what the convert does.
    HloInstruction* convert = OnlyUser(d);
    if (Is(convert, HloOpcode::kConvert) && d->shape().element_type() == PrimitiveType::kF32 &&
        (convert->shape().element_type() == PrimitiveType::kBF16 ||
         convert->shape().element_type() == PrimitiveType::kF16)) {
      epilogue.converted = convert;
    }
  }
  return epilogue;
}

HloInstruction* GemmResult(const GemmEpilogue& epilogue) {
  if (epilogue.quantized != nullptr) return epilogue.quantized;
  if (epilogue.converted != nullptr) return epilogue.converted;
  return epilogue.last;
}

}  // namespace fp8dot::hlo::patterns
