// Values of the HLO interpreter: rounding to element types and conversions to/from HostTensor.
#include "fp8dot/hlo/interpreter_value.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "fp8dot/random.h"

namespace fp8dot::hlo {
namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

// `value` (integral, finite) modulo 2^64, as the bits of a uint64.
uint64_t Modulo2To64(double value) {
  if (std::fabs(value) < kTwoTo63) {
    return static_cast<uint64_t>(static_cast<int64_t>(value));  // exact two's complement
  }
  double m = std::fmod(value, kTwoTo64);
  if (m < 0) m += kTwoTo64;
  if (m >= kTwoTo64) m = 0;  // fmod rounding at the edge
  if (m >= kTwoTo63) return static_cast<uint64_t>(m - kTwoTo63) + (uint64_t{1} << 63);
  return static_cast<uint64_t>(m);
}

double IntegerFromBits(uint64_t bits, PrimitiveType type) {
  const int width = PrimitiveTypeByteSize(type) * 8;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  if (!IsSignedIntegralType(type)) return static_cast<double>(bits);
  if (width == 64) return static_cast<double>(static_cast<int64_t>(bits));
  const bool negative = (bits >> (width - 1)) & 1;
  const int64_t as_int = static_cast<int64_t>(bits);
  return static_cast<double>(negative ? as_int - (int64_t{1} << width) : as_int);
}

std::pair<double, double> IntegerRange(PrimitiveType type) {
  const int width = PrimitiveTypeByteSize(type) * 8;
  if (IsSignedIntegralType(type)) {
    const double half = std::ldexp(1.0, width - 1);
    return {-half, half - 1};
  }
  return {0.0, std::ldexp(1.0, width) - 1};
}

}  // namespace

Value Value::Array(Shape shape, std::vector<double> values) {
  Value value;
  value.shape = std::move(shape);
  value.values = std::move(values);
  return value;
}

Value Value::Scalar(PrimitiveType type, double value) {
  return Array(Shape::MakeScalar(type), {RoundToElementType(value, type)});
}

Value Value::Tuple(std::vector<Value> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Value& element : elements) shapes.push_back(element.shape);
  Value value;
  value.shape = Shape::MakeTuple(std::move(shapes));
  value.elements = std::move(elements);
  return value;
}

double RoundToElementType(double value, PrimitiveType type) {
  if (type == PrimitiveType::kPred) return value != 0 ? 1.0 : 0.0;  // NaN != 0: true, as C++
  if (IsIntegralType(type)) {
    if (!std::isfinite(value)) return 0.0;
    return IntegerFromBits(Modulo2To64(std::trunc(value)), type);
  }
  if (type == PrimitiveType::kF64) return value;
  std::optional<DType> dtype = ToDType(type);
  if (!dtype.has_value()) return value;
  return RoundToDType(value, *dtype, Overflow::kIeee);
}

double ConvertFloatToInteger(double value, PrimitiveType type) {
  if (std::isnan(value)) return 0.0;
  // For s64/u64 the bounds round to doubles (2^63, 2^64) beyond 2^53, which the interpreter
  // refuses as inexact: saturating there is an error, never a wrapped -2^63.
  const auto [low, high] = IntegerRange(type);
  const double truncated = std::trunc(value);
  if (truncated <= low) return low;
  if (truncated >= high) return high;
  return truncated;
}

StatusOr<HostTensor> ValueToHostTensor(const Value& value, const std::string& what) {
  if (value.IsTuple()) {
    return InvalidArgument("%s: a tuple %s has no tensor form", what.c_str(),
                           value.ShapeString().c_str());
  }
  std::optional<DType> dtype = ToDType(value.shape.element_type());
  if (!dtype.has_value()) {
    return InvalidArgument(
        "%s: %s has no fp8dot tensor type (only f8e4m3fn, f8e5m2, bf16, f16, f32, f64)",
        what.c_str(), value.ShapeString().c_str());
  }
  FP8_ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::Create(*dtype, value.shape.dimensions()));
  for (int64_t i = 0; i < value.element_count(); ++i) {
    tensor.SetPhysical(i, value.values[static_cast<size_t>(i)]);
  }
  return tensor;
}

StatusOr<Value> ValueFromHostTensor(const HostTensor& tensor, const Shape& shape,
                                    const std::string& what) {
  if (!shape.IsArray()) {
    return InvalidArgument("%s: expected %s, which is not an array", what.c_str(),
                           shape.ToString().c_str());
  }
  if (tensor.dims() != shape.dimensions()) {
    return InvalidArgument("%s: expected dims %s (%s), got %s", what.c_str(),
                           DimsToString(shape.dimensions()).c_str(), shape.ToString().c_str(),
                           tensor.ShapeString().c_str());
  }
  const PrimitiveType type = shape.element_type();
  const bool float_target = IsFloatingPointType(type);
  if (float_target && FromDType(tensor.dtype()) != type) {
    return InvalidArgument("%s: expected element type %s, got %s", what.c_str(),
                           PrimitiveTypeName(type), DTypeName(tensor.dtype()));
  }
  HostTensor row_major = tensor.ToRowMajor();
  std::vector<double> values(static_cast<size_t>(row_major.element_count()));
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = row_major.GetPhysical(static_cast<int64_t>(i));
    if (!float_target) {
      if (!std::isfinite(v) || v != std::trunc(v)) {
        return InvalidArgument("%s: element %zu is %g, which is not a valid %s value", what.c_str(),
                               i, v, PrimitiveTypeName(type));
      }
      if (type == PrimitiveType::kPred && v != 0 && v != 1) {
        return InvalidArgument("%s: element %zu is %g; pred values must be 0 or 1", what.c_str(), i,
                               v);
      }
      const auto [low, high] = IntegerRange(type);
      if (type != PrimitiveType::kPred && (v < low || v > high)) {
        return InvalidArgument("%s: element %zu is %g, out of range for %s", what.c_str(), i, v,
                               PrimitiveTypeName(type));
      }
    }
    values[i] = v;
  }
  return Value::Array(shape, std::move(values));
}

std::vector<uint8_t> EncodeValueBytes(const Value& value) {
  std::vector<uint8_t> bytes;
  if (value.IsTuple()) {
    for (const Value& element : value.elements) {
      std::vector<uint8_t> part = EncodeValueBytes(element);
      bytes.insert(bytes.end(), part.begin(), part.end());
    }
    return bytes;
  }
  const PrimitiveType type = value.shape.element_type();
  const int size = PrimitiveTypeByteSize(type);
  bytes.resize(value.values.size() * static_cast<size_t>(size));
  std::optional<DType> dtype = ToDType(type);
  for (size_t i = 0; i < value.values.size(); ++i) {
    uint8_t* out = bytes.data() + i * static_cast<size_t>(size);
    if (dtype.has_value()) {
      StoreElement(*dtype, value.values[i], out, 0);
    } else {
      // pred and integers: two's complement little-endian of the type's width.
      const uint64_t bits = Modulo2To64(value.values[i]);
      for (int b = 0; b < size; ++b) out[b] = static_cast<uint8_t>(bits >> (8 * b));
    }
  }
  return bytes;
}

StatusOr<Value> RandomValue(const Shape& shape, uint64_t seed) {
  if (shape.IsTuple()) {
    std::vector<Value> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      FP8_ASSIGN_OR_RETURN(
          Value element, RandomValue(shape.tuple_shapes(i), seed * 31 + static_cast<uint64_t>(i)));
      elements.push_back(std::move(element));
    }
    return Value::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) {
    return InvalidArgument("cannot make a random value of %s", shape.ToString().c_str());
  }
  const std::optional<int64_t> count = shape.CheckedElementCount();
  if (!count.has_value() || *count > kDefaultMaxElements) {
    return ResourceExhausted("cannot make a random value of %s: more than %lld elements",
                             shape.ToString().c_str(), static_cast<long long>(kDefaultMaxElements));
  }
  const PrimitiveType type = shape.element_type();
  std::optional<DType> dtype = ToDType(type);
  if (dtype.has_value()) {
    FP8_ASSIGN_OR_RETURN(
        HostTensor tensor,
        RandomTensor(*dtype, shape.dimensions(),
                     shape.IsScalar() ? Distribution::kPositive : Distribution::kSymmetric, seed));
    return ValueFromHostTensor(tensor, shape);
  }
  double low = 0, high = 2;  // pred: floor of [0, 2)
  if (IsIntegralType(type)) {
    low = IsSignedIntegralType(type) ? -3 : 0;
    high = 4;
  }
  FP8_ASSIGN_OR_RETURN(HostTensor tensor,
                       UniformTensor(DType::kF64, shape.dimensions(), low, high, seed));
  std::vector<double> values(static_cast<size_t>(tensor.element_count()));
  bool all_zero = true;
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = std::floor(tensor.GetPhysical(static_cast<int64_t>(i)));
    all_zero = all_zero && values[i] == 0;
  }
  if (all_zero && !values.empty()) values[0] = 1;
  return Value::Array(shape, std::move(values));
}

}  // namespace fp8dot::hlo
