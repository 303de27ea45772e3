// Elementwise ops of the HLO interpreter: unary math, binary arithmetic, compare, convert,
// select, clamp, reduce-precision. Floats are computed in f64 and rounded to the element type
// (for + - * / and sqrt that is the correctly rounded result of the narrow type); pred and
// integers exactly, on their 64-bit two's complement bits, wrapped to their width.
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "hlo/interpreter_ops.h"

namespace fp8dot::hlo::internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int BitWidth(PrimitiveType type) { return PrimitiveTypeByteSize(type) * 8; }

uint64_t WidthMask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

bool IsPred(PrimitiveType type) { return type == PrimitiveType::kPred; }

double NanPropagatingMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) = +0
  return a > b ? a : b;
}

double NanPropagatingMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// a < b for two elements of `type` in shape.h's form: signed types compare as int64, unsigned
// ones and pred as uint64 (u64 values of 2^63 and more are negative as int64).
bool IntegerLess(PrimitiveType type, int64_t a, int64_t b) {
  return IsSignedIntegralType(type) ? a < b : static_cast<uint64_t>(a) < static_cast<uint64_t>(b);
}

// The bits of `a op b` before wrapping to the width: arithmetic on the uint64 bits is two's
// complement arithmetic (and has no signed overflow UB). pred needs no case of its own: on 0/1,
// + and max are or, * and min are and, - is xor, once wrapped (non-zero -> 1).
uint64_t IntegerBinaryBits(HloOpcode opcode, PrimitiveType type, int64_t a, int64_t b) {
  const int width = BitWidth(type);
  const bool is_signed = IsSignedIntegralType(type);
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  // XLA: a shift by the width or more gives 0 (the sign for an arithmetic shift); a negative
  // amount, read unsigned, is such a shift.
  const bool shift_out = ub >= static_cast<uint64_t>(width);
  switch (opcode) {
    case HloOpcode::kAdd:
      return ua + ub;
    case HloOpcode::kSubtract:
      return ua - ub;
    case HloOpcode::kMultiply:
      return ua * ub;
    case HloOpcode::kDivide:
      // XLA: x / 0 = -1 (all bits set); INT_MIN / -1 = INT_MIN, which is what -x wraps to (and
      // UB as a C++ division).
      if (b == 0) return ~uint64_t{0};
      if (!is_signed) return ua / ub;
      return b == -1 ? 0 - ua : static_cast<uint64_t>(a / b);
    case HloOpcode::kRemainder:
      // XLA: x % 0 = x, INT_MIN % -1 = 0.
      if (b == 0) return ua;
      if (!is_signed) return ua % ub;
      return b == -1 ? 0 : static_cast<uint64_t>(a % b);
    case HloOpcode::kMaximum:
      return IntegerLess(type, a, b) ? ub : ua;
    case HloOpcode::kMinimum:
      return IntegerLess(type, a, b) ? ua : ub;
    case HloOpcode::kAnd:
      return ua & ub;
    case HloOpcode::kOr:
      return ua | ub;
    case HloOpcode::kXor:
      return ua ^ ub;
    case HloOpcode::kShiftLeft:
      return shift_out ? 0 : ua << ub;
    case HloOpcode::kShiftRightLogical:
      return shift_out ? 0 : (ua & WidthMask(width)) >> ub;  // zeros in at the type's top bit
    case HloOpcode::kShiftRightArithmetic:
      if (!is_signed) return shift_out ? 0 : ua >> ub;  // XLA: unsigned types shift in zeros
      return static_cast<uint64_t>(a >> (shift_out ? 63 : ub));  // a is sign-extended
    case HloOpcode::kPower: {
      // Exact power by squaring, wrapping; negative exponents give 0 (bases 1 and -1 excepted),
      // as XLA.
      if (is_signed && b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (ub & 1) != 0 ? ~uint64_t{0} : 1;
        return 0;
      }
      uint64_t result = 1, base = ua;
      for (uint64_t e = ub; e != 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return result;
    }
    default:
      return 0;  // not defined for integers (BinaryIsDefined)
  }
}

// The bits of a unary op on `x` (shape.h's form) before wrapping, or nullopt when `opcode` is not
// one for pred/integers.
std::optional<uint64_t> IntegerUnaryBits(HloOpcode opcode, PrimitiveType type, int64_t x) {
  const uint64_t ux = static_cast<uint64_t>(x);
  const bool is_signed = IsSignedIntegralType(type);
  switch (opcode) {
    case HloOpcode::kAbs:
      return is_signed && x < 0 ? 0 - ux : ux;  // abs(INT_MIN) wraps to INT_MIN, as XLA
    case HloOpcode::kNegate:
      return 0 - ux;
    case HloOpcode::kSign:
      return is_signed && x < 0 ? ~uint64_t{0} : static_cast<uint64_t>(x != 0);
    case HloOpcode::kNot:
      return IsPred(type) ? ux ^ 1 : ~ux;  // logical on pred, bitwise on integers
    case HloOpcode::kPopulationCount:
      if (IsPred(type)) break;
      return static_cast<uint64_t>(std::popcount(ux & WidthMask(BitWidth(type))));
    case HloOpcode::kClz:
      if (IsPred(type)) break;
      return static_cast<uint64_t>(std::countl_zero(ux & WidthMask(BitWidth(type))) -
                                   (64 - BitWidth(type)));
    default:
      break;
  }
  return std::nullopt;
}

// The function a float unary op computes in f64 (rounded to the type afterwards), or an empty
// function when `opcode` is not one for floats.
std::function<double(double)> FloatUnaryFunction(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAbs:
      return [](double x) { return std::fabs(x); };
    case HloOpcode::kNegate:
      return [](double x) { return -x; };
    case HloOpcode::kSign:
      return [](double x) { return std::isnan(x) || x == 0 ? x : (x > 0 ? 1.0 : -1.0); };
    case HloOpcode::kExp:
      return [](double x) { return std::exp(x); };
    case HloOpcode::kExpm1:
      return [](double x) { return std::expm1(x); };
    case HloOpcode::kLog:
      return [](double x) { return std::log(x); };
    case HloOpcode::kLog1p:
      return [](double x) { return std::log1p(x); };
    case HloOpcode::kTanh:
      return [](double x) { return std::tanh(x); };
    case HloOpcode::kSqrt:
      return [](double x) { return std::sqrt(x); };
    case HloOpcode::kRsqrt:
      return [](double x) { return 1.0 / std::sqrt(x); };
    case HloOpcode::kCbrt:
      return [](double x) { return std::cbrt(x); };
    case HloOpcode::kFloor:
      return [](double x) { return std::floor(x); };
    case HloOpcode::kCeil:
      return [](double x) { return std::ceil(x); };
    case HloOpcode::kCos:
      return [](double x) { return std::cos(x); };
    case HloOpcode::kSin:
      return [](double x) { return std::sin(x); };
    case HloOpcode::kTan:
      return [](double x) { return std::tan(x); };
    case HloOpcode::kLogistic:
      return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    case HloOpcode::kRoundNearestEven:
      return [](double x) { return std::nearbyint(x); };  // the default rounding mode: to even
    case HloOpcode::kRoundNearestAfz:
      return [](double x) { return std::round(x); };
    case HloOpcode::kErf:
      return [](double x) { return std::erf(x); };
    default:
      return {};
  }
}

// Total order of XLA's compare type=TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t TotalOrderKey(double value) {
  int64_t bits = std::bit_cast<int64_t>(value);
  if (bits < 0) bits ^= std::numeric_limits<int64_t>::max();
  return bits;
}

template <typename T>
bool Compare(ComparisonDirection direction, T a, T b) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kLt:
      return a < b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kGe:
      return a >= b;
  }
  return false;
}

// The result's element count, or -1 for a result that is not an array (which no operand matches).
int64_t ResultCount(const HloInstruction& instruction) {
  return instruction.shape().IsArray() ? instruction.shape().ElementCount() : -1;
}

}  // namespace

bool BinaryIsDefined(HloOpcode opcode, PrimitiveType type) {
  const bool shift = opcode == HloOpcode::kShiftLeft ||
                     opcode == HloOpcode::kShiftRightArithmetic ||
                     opcode == HloOpcode::kShiftRightLogical;
  const bool bitwise =
      shift || opcode == HloOpcode::kAnd || opcode == HloOpcode::kOr || opcode == HloOpcode::kXor;
  if (IsFloatingPointType(type)) return !bitwise;
  if (opcode == HloOpcode::kAtan2) return false;
  if (IsPred(type)) {
    return !shift && opcode != HloOpcode::kDivide && opcode != HloOpcode::kRemainder &&
           opcode != HloOpcode::kPower;
  }
  return IsIntegralType(type);
}

int64_t ApplyBinary(HloOpcode opcode, PrimitiveType type, int64_t a, int64_t b) {
  return WrapToIntegerType(IntegerBinaryBits(opcode, type, a, b), type);
}

double ApplyBinary(HloOpcode opcode, PrimitiveType type, double a, double b) {
  double result = kNaN;
  switch (opcode) {
    case HloOpcode::kAdd:
      result = a + b;
      break;
    case HloOpcode::kSubtract:
      result = a - b;
      break;
    case HloOpcode::kMultiply:
      result = a * b;
      break;
    case HloOpcode::kDivide:
      result = a / b;
      break;
    case HloOpcode::kRemainder:
      result = std::fmod(a, b);
      break;
    case HloOpcode::kPower:
      result = std::pow(a, b);
      break;
    case HloOpcode::kMaximum:
      result = NanPropagatingMax(a, b);
      break;
    case HloOpcode::kMinimum:
      result = NanPropagatingMin(a, b);
      break;
    case HloOpcode::kAtan2:
      result = std::atan2(a, b);
      break;
    default:
      result = kNaN;
  }
  return RoundToElementType(result, type);
}

StatusOr<Value> EvalBinary(const HloInstruction& instruction, const Value& lhs, const Value& rhs) {
  const HloOpcode opcode = instruction.opcode();
  const PrimitiveType type = instruction.shape().element_type();
  FP8_RETURN_IF_ERROR(CheckOperands(instruction, {&lhs, &rhs}, type, ResultCount(instruction)));
  if (!BinaryIsDefined(opcode, type)) {
    return InvalidArgument("%s: %s is not defined for element type %s",
                           instruction.NameForErrors().c_str(), HloOpcodeString(opcode),
                           PrimitiveTypeName(type));
  }
  Value out = Value::Zeros(instruction.shape());
  VisitElements(
      [&](auto& o, const auto& a, const auto& b) {
        for (size_t i = 0; i < o.size(); ++i) o[i] = ApplyBinary(opcode, type, a[i], b[i]);
      },
      out, lhs, rhs);
  return out;
}

StatusOr<Value> EvalUnary(const HloInstruction& instruction, const Value& operand) {
  const HloOpcode opcode = instruction.opcode();
  const PrimitiveType in_type = operand.shape.element_type();
  const PrimitiveType out_type = instruction.shape().element_type();
  // is-finite gives pred; every other unary op keeps the element type.
  const bool is_finite = opcode == HloOpcode::kIsFinite;
  FP8_RETURN_IF_ERROR(CheckOperands(instruction, {&operand}, is_finite ? in_type : out_type,
                                    ResultCount(instruction)));
  Value out = Value::Zeros(instruction.shape());
  if (is_finite && IsFloatingPointType(in_type) && IsPred(out_type)) {
    for (size_t i = 0; i < out.integers.size(); ++i) {
      out.integers[i] = std::isfinite(operand.values[i]) ? 1 : 0;
    }
    return out;
  }
  const std::function<double(double)> float_fn =
      !is_finite && IsFloatingPointType(in_type) ? FloatUnaryFunction(opcode) : nullptr;
  const bool integer_op =
      !is_finite && operand.HoldsIntegers() && IntegerUnaryBits(opcode, in_type, 0).has_value();
  if (!float_fn && !integer_op) {
    return Unimplemented("%s: %s is not supported for element type %s by the interpreter",
                         instruction.NameForErrors().c_str(), HloOpcodeString(opcode),
                         PrimitiveTypeName(in_type));
  }
  for (size_t i = 0; i < out.integers.size(); ++i) {
    out.integers[i] =
        WrapToIntegerType(*IntegerUnaryBits(opcode, in_type, operand.integers[i]), out_type);
  }
  for (size_t i = 0; i < out.values.size(); ++i) {
    out.values[i] = RoundToElementType(float_fn(operand.values[i]), out_type);
  }
  return out;
}

StatusOr<Value> EvalCompare(const HloInstruction& instruction, const Value& lhs, const Value& rhs) {
  const PrimitiveType type = lhs.shape.element_type();
  FP8_RETURN_IF_ERROR(CheckOperands(instruction, {&lhs, &rhs}, type, ResultCount(instruction)));
  if (!IsPred(instruction.shape().element_type())) {
    return InvalidArgument("%s: compare must give pred, not %s",
                           instruction.NameForErrors().c_str(),
                           instruction.shape().ToString().c_str());
  }
  if (!instruction.comparison_direction().has_value()) {
    return InvalidArgument("%s: compare without direction=", instruction.NameForErrors().c_str());
  }
  const ComparisonDirection direction = *instruction.comparison_direction();
  const std::string* order = instruction.FindRawAttribute("type");
  const bool total_order = order != nullptr && *order == "TOTALORDER" && IsFloatingPointType(type);
  Value out = Value::Zeros(instruction.shape());
  for (size_t i = 0; i < out.integers.size(); ++i) {
    bool result = false;
    if (!lhs.HoldsIntegers()) {
      const double a = lhs.values[i], b = rhs.values[i];
      result = total_order ? Compare(direction, TotalOrderKey(a), TotalOrderKey(b))
                           : Compare(direction, a, b);
    } else if (IsSignedIntegralType(type)) {
      result = Compare(direction, lhs.integers[i], rhs.integers[i]);
    } else {  // unsigned and pred: as uint64, so u64 values >= 2^63 order above the rest
      result = Compare(direction, static_cast<uint64_t>(lhs.integers[i]),
                       static_cast<uint64_t>(rhs.integers[i]));
    }
    out.integers[i] = result ? 1 : 0;
  }
  return out;
}

StatusOr<Value> EvalConvert(const HloInstruction& instruction, const Value& operand) {
  const PrimitiveType from = operand.shape.element_type();
  const PrimitiveType to = instruction.shape().element_type();
  FP8_RETURN_IF_ERROR(CheckOperands(instruction, {&operand}, from, ResultCount(instruction)));
  Value out = Value::Zeros(instruction.shape());
  if (out.element_count() != operand.element_count()) {  // `to` has no elements: token, tuple
    return InvalidArgument("%s: cannot convert %s to %s", instruction.NameForErrors().c_str(),
                           operand.ShapeString().c_str(), instruction.shape().ToString().c_str());
  }
  // Four cases by storage: float -> float rounds, float -> integer truncates and saturates,
  // integer -> float rounds once, integer -> integer wraps (two's complement; pred: non-zero).
  for (size_t i = 0; i < static_cast<size_t>(out.element_count()); ++i) {
    if (operand.HoldsIntegers()) {
      const int64_t x = operand.integers[i];
      if (out.HoldsIntegers()) {
        out.integers[i] = WrapToIntegerType(static_cast<uint64_t>(x), to);
      } else {
        out.values[i] = IntegerToFloat(x, from, to);
      }
    } else {
      const double v = operand.values[i];
      if (out.HoldsIntegers()) {
        out.integers[i] = ConvertFloatToInteger(v, to);
      } else {
        out.values[i] = RoundToElementType(v, to);
      }
    }
  }
  return out;
}

StatusOr<Value> EvalSelect(const HloInstruction& instruction, const Value& pred,
                           const Value& on_true, const Value& on_false) {
  const int64_t count = ResultCount(instruction);
  FP8_RETURN_IF_ERROR(
      CheckOperands(instruction, {&on_true, &on_false}, instruction.shape().element_type(), count));
  const bool scalar_pred = pred.element_count() == 1;
  if (pred.IsTuple() || !IsPred(pred.shape.element_type()) ||
      (!scalar_pred && pred.element_count() != count)) {
    return InvalidArgument("%s: predicate %s does not match %s",
                           instruction.NameForErrors().c_str(), pred.ShapeString().c_str(),
                           on_true.ShapeString().c_str());
  }
  Value out = on_true;
  out.shape = instruction.shape();
  for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
    if (pred.integers[scalar_pred ? 0 : i] == 0) CopyElement(on_false, i, out, i);
  }
  return out;
}

StatusOr<Value> EvalClamp(const HloInstruction& instruction, const Value& low, const Value& operand,
                          const Value& high) {
  const PrimitiveType type = instruction.shape().element_type();
  const int64_t n = ResultCount(instruction);
  FP8_RETURN_IF_ERROR(CheckOperands(instruction, {&operand}, type, n));
  // The bounds are scalars or of the operand's shape.
  for (const Value* bound : {&low, &high}) {
    if (bound->IsTuple() || bound->shape.element_type() != type ||
        (bound->element_count() != 1 && bound->element_count() != n)) {
      return InvalidArgument("%s: clamp bounds %s, %s do not match the operand %s",
                             instruction.NameForErrors().c_str(), low.ShapeString().c_str(),
                             high.ShapeString().c_str(), operand.ShapeString().c_str());
    }
  }
  Value out = Value::Zeros(instruction.shape());
  VisitElements(
      [&](auto& o, const auto& lo, const auto& x, const auto& hi) {
        for (size_t i = 0; i < o.size(); ++i) {
          const auto at_least_lo =
              ApplyBinary(HloOpcode::kMaximum, type, x[i], lo[lo.size() == 1 ? 0 : i]);
          o[i] = ApplyBinary(HloOpcode::kMinimum, type, at_least_lo, hi[hi.size() == 1 ? 0 : i]);
        }
      },
      out, low, operand, high);
  return out;
}

StatusOr<Value> EvalReducePrecision(const HloInstruction& instruction, const Value& operand) {
  const int64_t exponent_bits = instruction.exponent_bits();
  const int64_t mantissa_bits = instruction.mantissa_bits();
  const PrimitiveType type = instruction.shape().element_type();
  if (exponent_bits < 1 || exponent_bits > 11 || mantissa_bits < 0 || mantissa_bits > 52 ||
      !IsFloatingPointType(type)) {
    return InvalidArgument(
        "%s: reduce-precision needs a float type, exponent_bits in [1, 11] and "
        "mantissa_bits in [0, 52], got %s, %lld and %lld",
        instruction.NameForErrors().c_str(), PrimitiveTypeName(type),
        static_cast<long long>(exponent_bits), static_cast<long long>(mantissa_bits));
  }
  FP8_RETURN_IF_ERROR(CheckOperands(instruction, {&operand}, type, ResultCount(instruction)));
  const int max_exponent = (1 << (exponent_bits - 1)) - 1;  // of the reduced type
  const int min_exponent = 1 - max_exponent;
  const int m = static_cast<int>(mantissa_bits);
  std::vector<double> out(operand.values.size());
  for (size_t i = 0; i < out.size(); ++i) {
    double x = operand.values[i];
    if (std::isfinite(x) && x != 0) {
      // Round the mantissa to m bits (to nearest even), then overflow to inf and flush values
      // below the smallest normal to zero, as XLA's reduce-precision does.
      int e = 0;
      std::frexp(x, &e);
      double y = std::ldexp(std::nearbyint(std::ldexp(x, m - (e - 1))), (e - 1) - m);
      std::frexp(y, &e);
      if (e - 1 > max_exponent) y = std::copysign(std::numeric_limits<double>::infinity(), x);
      if (e - 1 < min_exponent) y = std::copysign(0.0, x);
      x = y;
    }
    out[i] = RoundToElementType(x, type);
  }
  return Value::Array(instruction.shape(), std::move(out));
}

}  // namespace fp8dot::hlo::internal
