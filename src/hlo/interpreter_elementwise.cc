// Elementwise ops of the HLO interpreter: unary math, binary arithmetic, compare, convert,
// select, clamp, reduce-precision. Floats are computed in f64 and rounded to the element type
// (for + - * / and sqrt that is the correctly rounded result of the narrow type); integers in
// 64-bit two's complement and wrapped to their width.
#include <bit>
#include <cmath>
#include <limits>

#include "hlo/interpreter_ops.h"

namespace fp8dot::hlo::internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int BitWidth(PrimitiveType type) { return PrimitiveTypeByteSize(type) * 8; }

uint64_t WidthMask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

// The integer's bits (two's complement), zero-extended from its width.
uint64_t IntegerBits(double value, PrimitiveType type) {
  if (!std::isfinite(value)) return 0;
  const uint64_t bits = value >= 9223372036854775808.0
                            ? static_cast<uint64_t>(value)
                            : static_cast<uint64_t>(static_cast<int64_t>(value));
  return bits & WidthMask(BitWidth(type));
}

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

double IntegerBinary(HloOpcode opcode, PrimitiveType type, double a, double b) {
  const int width = BitWidth(type);
  const bool is_signed = IsSignedIntegralType(type);
  const uint64_t ua = IntegerBits(a, type);
  const uint64_t ub = IntegerBits(b, type);
  const auto [min_value, max_value] =
      is_signed ? std::pair{-std::ldexp(1.0, width - 1), std::ldexp(1.0, width - 1) - 1}
                : std::pair{0.0, std::ldexp(1.0, width) - 1};
  switch (opcode) {
    case HloOpcode::kAdd:
      return RoundToElementType(static_cast<double>((ua + ub) & WidthMask(width)), type);
    case HloOpcode::kSubtract:
      return RoundToElementType(static_cast<double>((ua - ub) & WidthMask(width)), type);
    case HloOpcode::kMultiply:
      return RoundToElementType(static_cast<double>((ua * ub) & WidthMask(width)), type);
    case HloOpcode::kDivide:
      // XLA: x / 0 = -1 (all bits set), INT_MIN / -1 = INT_MIN.
      if (b == 0) return is_signed ? -1.0 : max_value;
      if (is_signed && a == min_value && b == -1) return min_value;
      return std::trunc(a / b);
    case HloOpcode::kRemainder:
      // XLA: x % 0 = x, INT_MIN % -1 = 0.
      if (b == 0) return a;
      if (is_signed && a == min_value && b == -1) return 0;
      return std::fmod(a, b);
    case HloOpcode::kMaximum:
      return a > b ? a : b;
    case HloOpcode::kMinimum:
      return a < b ? a : b;
    case HloOpcode::kAnd:
      return static_cast<double>(ua & ub);
    case HloOpcode::kOr:
      return static_cast<double>(ua | ub);
    case HloOpcode::kXor:
      return static_cast<double>(ua ^ ub);
    case HloOpcode::kShiftLeft:
      if (b < 0 || b >= width) return 0;
      return static_cast<double>((ua << static_cast<int>(b)) & WidthMask(width));
    case HloOpcode::kShiftRightLogical:
      if (b < 0 || b >= width) return 0;
      return static_cast<double>(ua >> static_cast<int>(b));
    case HloOpcode::kShiftRightArithmetic: {
      if (!is_signed) {  // XLA: arithmetic shift of an unsigned type shifts in zeros
        if (b < 0 || b >= width) return 0;
        return static_cast<double>(ua >> static_cast<int>(b));
      }
      const int64_t sa = static_cast<int64_t>(a);
      if (b < 0 || b >= width) return sa < 0 ? -1 : 0;
      return static_cast<double>(sa >> static_cast<int>(b));
    }
    case HloOpcode::kPower: {
      // Exact integer power by squaring; negative exponents give 0 (1 and -1 excepted), as XLA.
      if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return std::fmod(-b, 2) == 0 ? 1 : -1;
        return 0;
      }
      uint64_t result = 1, base = ua;
      for (uint64_t e = ub; e != 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<double>(result & WidthMask(width));
    }
    default:
      return kNaN;
  }
}

bool IsPred(PrimitiveType type) { return type == PrimitiveType::kPred; }

Status CheckSameCount(const HloInstruction& instruction, const Value& a, const Value& b) {
  if (a.IsTuple() || b.IsTuple() || a.values.size() != b.values.size() ||
      static_cast<int64_t>(a.values.size()) != instruction.shape().ElementCount()) {
    return InvalidArgument("%s: operand shapes %s and %s do not match the result %s",
                           instruction.NameForErrors().c_str(), a.ShapeString().c_str(),
                           b.ShapeString().c_str(), instruction.shape().ToString().c_str());
  }
  return OkStatus();
}

// Total order of XLA's compare type=TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t TotalOrderKey(double value) {
  int64_t bits = std::bit_cast<int64_t>(value);
  if (bits < 0) bits ^= std::numeric_limits<int64_t>::max();
  return bits;
}

}  // namespace

double ApplyBinary(HloOpcode opcode, PrimitiveType type, double a, double b) {
  double result = kNaN;
  if (IsPred(type)) {
    const bool x = a != 0, y = b != 0;
    switch (opcode) {
      case HloOpcode::kAnd:
      case HloOpcode::kMultiply:
      case HloOpcode::kMinimum:
        result = x && y;
        break;
      case HloOpcode::kOr:
      case HloOpcode::kAdd:
      case HloOpcode::kMaximum:
        result = x || y;
        break;
      case HloOpcode::kXor:
      case HloOpcode::kSubtract:
        result = x != y;
        break;
      default:
        result = kNaN;
    }
    return RoundToElementType(result, type);
  }
  if (IsIntegralType(type)) return RoundToElementType(IntegerBinary(opcode, type, a, b), type);
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
  FP8_RETURN_IF_ERROR(CheckSameCount(instruction, lhs, rhs));
  const HloOpcode opcode = instruction.opcode();
  const PrimitiveType type = instruction.shape().element_type();
  const bool is_float = IsFloatingPointType(type);
  const bool bitwise = opcode == HloOpcode::kAnd || opcode == HloOpcode::kOr ||
                       opcode == HloOpcode::kXor || opcode == HloOpcode::kShiftLeft ||
                       opcode == HloOpcode::kShiftRightArithmetic ||
                       opcode == HloOpcode::kShiftRightLogical;
  if ((is_float && bitwise) || (!is_float && opcode == HloOpcode::kAtan2) ||
      (IsPred(type) &&
       (opcode == HloOpcode::kDivide || opcode == HloOpcode::kRemainder ||
        opcode == HloOpcode::kPower || opcode == HloOpcode::kShiftLeft ||
        opcode == HloOpcode::kShiftRightArithmetic || opcode == HloOpcode::kShiftRightLogical))) {
    return InvalidArgument("%s: %s is not defined for element type %s",
                           instruction.NameForErrors().c_str(), HloOpcodeString(opcode),
                           PrimitiveTypeName(type));
  }
  std::vector<double> out(lhs.values.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = ApplyBinary(opcode, type, lhs.values[i], rhs.values[i]);
  }
  return Value::Array(instruction.shape(), std::move(out));
}

StatusOr<Value> EvalUnary(const HloInstruction& instruction, const Value& operand) {
  if (operand.IsTuple() ||
      static_cast<int64_t>(operand.values.size()) != instruction.shape().ElementCount()) {
    return InvalidArgument("%s: operand %s does not match the result %s",
                           instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
                           instruction.shape().ToString().c_str());
  }
  const HloOpcode opcode = instruction.opcode();
  const PrimitiveType in_type = operand.shape.element_type();
  const PrimitiveType out_type = instruction.shape().element_type();
  const bool is_float = IsFloatingPointType(in_type);
  const bool is_int = IsIntegralType(in_type);
  std::function<double(double)> fn;
  switch (opcode) {
    case HloOpcode::kAbs:
      fn = [](double x) { return std::fabs(x); };
      break;
    case HloOpcode::kNegate:
      fn = [](double x) { return -x; };
      break;
    case HloOpcode::kSign:
      fn = [](double x) { return std::isnan(x) || x == 0 ? x : (x > 0 ? 1.0 : -1.0); };
      break;
    case HloOpcode::kIsFinite:
      if (!is_float) break;
      fn = [](double x) { return std::isfinite(x) ? 1.0 : 0.0; };
      break;
    case HloOpcode::kNot:
      if (IsPred(in_type)) {
        fn = [](double x) { return x != 0 ? 0.0 : 1.0; };
      } else if (is_int) {
        fn = [in_type](double x) {
          return static_cast<double>(~IntegerBits(x, in_type) & WidthMask(BitWidth(in_type)));
        };
      }
      break;
    case HloOpcode::kPopulationCount:
      if (!is_int) break;
      fn = [in_type](double x) {
        return static_cast<double>(std::popcount(IntegerBits(x, in_type)));
      };
      break;
    case HloOpcode::kClz:
      if (!is_int) break;
      fn = [in_type](double x) {
        return static_cast<double>(std::countl_zero(IntegerBits(x, in_type)) -
                                   (64 - BitWidth(in_type)));
      };
      break;
    default:
      break;
  }
  if (!fn && is_float) {
    switch (opcode) {
      case HloOpcode::kExp:
        fn = [](double x) { return std::exp(x); };
        break;
      case HloOpcode::kExpm1:
        fn = [](double x) { return std::expm1(x); };
        break;
      case HloOpcode::kLog:
        fn = [](double x) { return std::log(x); };
        break;
      case HloOpcode::kLog1p:
        fn = [](double x) { return std::log1p(x); };
        break;
      case HloOpcode::kTanh:
        fn = [](double x) { return std::tanh(x); };
        break;
      case HloOpcode::kSqrt:
        fn = [](double x) { return std::sqrt(x); };
        break;
      case HloOpcode::kRsqrt:
        fn = [](double x) { return 1.0 / std::sqrt(x); };
        break;
      case HloOpcode::kCbrt:
        fn = [](double x) { return std::cbrt(x); };
        break;
      case HloOpcode::kFloor:
        fn = [](double x) { return std::floor(x); };
        break;
      case HloOpcode::kCeil:
        fn = [](double x) { return std::ceil(x); };
        break;
      case HloOpcode::kCos:
        fn = [](double x) { return std::cos(x); };
        break;
      case HloOpcode::kSin:
        fn = [](double x) { return std::sin(x); };
        break;
      case HloOpcode::kTan:
        fn = [](double x) { return std::tan(x); };
        break;
      case HloOpcode::kLogistic:
        fn = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
        break;
      case HloOpcode::kRoundNearestEven:
        fn = [](double x) { return std::nearbyint(x); };  // the default rounding mode: to even
        break;
      case HloOpcode::kRoundNearestAfz:
        fn = [](double x) { return std::round(x); };
        break;
      case HloOpcode::kErf:
        fn = [](double x) { return std::erf(x); };
        break;
      default:
        break;
    }
  }
  if (!fn) {
    return Unimplemented("%s: %s is not supported for element type %s by the interpreter",
                         instruction.NameForErrors().c_str(), HloOpcodeString(opcode),
                         PrimitiveTypeName(in_type));
  }
  std::vector<double> out(operand.values.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = RoundToElementType(fn(operand.values[i]), out_type);
  return Value::Array(instruction.shape(), std::move(out));
}

StatusOr<Value> EvalCompare(const HloInstruction& instruction, const Value& lhs, const Value& rhs) {
  FP8_RETURN_IF_ERROR(CheckSameCount(instruction, lhs, rhs));
  if (!instruction.comparison_direction().has_value()) {
    return InvalidArgument("%s: compare without direction=", instruction.NameForErrors().c_str());
  }
  const ComparisonDirection direction = *instruction.comparison_direction();
  const std::string* type = instruction.FindRawAttribute("type");
  const bool total_order =
      type != nullptr && *type == "TOTALORDER" && IsFloatingPointType(lhs.shape.element_type());
  std::vector<double> out(lhs.values.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const double a = lhs.values[i], b = rhs.values[i];
    bool result = false;
    if (total_order) {
      const int64_t ka = TotalOrderKey(a), kb = TotalOrderKey(b);
      switch (direction) {
        case ComparisonDirection::kEq:
          result = ka == kb;
          break;
        case ComparisonDirection::kNe:
          result = ka != kb;
          break;
        case ComparisonDirection::kLt:
          result = ka < kb;
          break;
        case ComparisonDirection::kLe:
          result = ka <= kb;
          break;
        case ComparisonDirection::kGt:
          result = ka > kb;
          break;
        case ComparisonDirection::kGe:
          result = ka >= kb;
          break;
      }
    } else {
      switch (direction) {
        case ComparisonDirection::kEq:
          result = a == b;
          break;
        case ComparisonDirection::kNe:
          result = a != b;
          break;
        case ComparisonDirection::kLt:
          result = a < b;
          break;
        case ComparisonDirection::kLe:
          result = a <= b;
          break;
        case ComparisonDirection::kGt:
          result = a > b;
          break;
        case ComparisonDirection::kGe:
          result = a >= b;
          break;
      }
    }
    out[i] = result ? 1.0 : 0.0;
  }
  return Value::Array(instruction.shape(), std::move(out));
}

StatusOr<Value> EvalConvert(const HloInstruction& instruction, const Value& operand) {
  if (operand.IsTuple() ||
      static_cast<int64_t>(operand.values.size()) != instruction.shape().ElementCount()) {
    return InvalidArgument("%s: operand %s does not match the result %s",
                           instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
                           instruction.shape().ToString().c_str());
  }
  const PrimitiveType from = operand.shape.element_type();
  const PrimitiveType to = instruction.shape().element_type();
  const bool float_to_int = IsFloatingPointType(from) && IsIntegralType(to);
  std::vector<double> out(operand.values.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const double v = operand.values[i];
    out[i] = float_to_int ? ConvertFloatToInteger(v, to) : RoundToElementType(v, to);
  }
  return Value::Array(instruction.shape(), std::move(out));
}

StatusOr<Value> EvalSelect(const HloInstruction& instruction, const Value& pred,
                           const Value& on_true, const Value& on_false) {
  FP8_RETURN_IF_ERROR(CheckSameCount(instruction, on_true, on_false));
  const bool scalar_pred = pred.values.size() == 1 && !pred.IsTuple();
  if (!scalar_pred && pred.values.size() != on_true.values.size()) {
    return InvalidArgument("%s: predicate %s does not match %s",
                           instruction.NameForErrors().c_str(), pred.ShapeString().c_str(),
                           on_true.ShapeString().c_str());
  }
  std::vector<double> out(on_true.values.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = pred.values[scalar_pred ? 0 : i] != 0 ? on_true.values[i] : on_false.values[i];
  }
  return Value::Array(instruction.shape(), std::move(out));
}

StatusOr<Value> EvalClamp(const HloInstruction& instruction, const Value& low, const Value& operand,
                          const Value& high) {
  const size_t n = operand.values.size();
  if (operand.IsTuple() || static_cast<int64_t>(n) != instruction.shape().ElementCount() ||
      (low.values.size() != 1 && low.values.size() != n) ||
      (high.values.size() != 1 && high.values.size() != n)) {
    return InvalidArgument("%s: clamp bounds %s, %s do not match the operand %s",
                           instruction.NameForErrors().c_str(), low.ShapeString().c_str(),
                           high.ShapeString().c_str(), operand.ShapeString().c_str());
  }
  const PrimitiveType type = instruction.shape().element_type();
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const double lo = low.values[low.values.size() == 1 ? 0 : i];
    const double hi = high.values[high.values.size() == 1 ? 0 : i];
    out[i] = ApplyBinary(HloOpcode::kMinimum, type,
                         ApplyBinary(HloOpcode::kMaximum, type, operand.values[i], lo), hi);
  }
  return Value::Array(instruction.shape(), std::move(out));
}

StatusOr<Value> EvalReducePrecision(const HloInstruction& instruction, const Value& operand) {
  const int64_t exponent_bits = instruction.exponent_bits();
  const int64_t mantissa_bits = instruction.mantissa_bits();
  if (exponent_bits < 1 || exponent_bits > 11 || mantissa_bits < 0 || mantissa_bits > 52 ||
      !IsFloatingPointType(instruction.shape().element_type())) {
    return InvalidArgument(
        "%s: reduce-precision needs a float type, exponent_bits in [1, 11] and "
        "mantissa_bits in [0, 52], got %s, %lld and %lld",
        instruction.NameForErrors().c_str(), PrimitiveTypeName(instruction.shape().element_type()),
        static_cast<long long>(exponent_bits), static_cast<long long>(mantissa_bits));
  }
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
    out[i] = RoundToElementType(x, instruction.shape().element_type());
  }
  return Value::Array(instruction.shape(), std::move(out));
}

}  // namespace fp8dot::hlo::internal
