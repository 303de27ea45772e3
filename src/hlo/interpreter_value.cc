// Values of the HLO interpreter: rounding to element types and conversions to/from HostTensor.
#include "fp8dot/hlo/interpreter_value.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "fp8dot/random.h"

namespace fp8dot::hlo {
namespace {

// The range of an integer type as [low, high) in doubles (exact: powers of two).
std::pair<double, double> IntegerRange(PrimitiveType type) {
  const int width = PrimitiveTypeByteSize(type) * 8;
  if (IsSignedIntegralType(type)) return {-std::ldexp(1.0, width - 1), std::ldexp(1.0, width - 1)};
  return {0.0, std::ldexp(1.0, width)};
}

// `magnitude` as a double rounded to odd: truncated to 53 significant bits, the last of them set
// when any bit was cut off. Rounding that once more to nearest, to any type of at most 51 bits
// of precision (f32 and narrower), gives the correctly rounded value of `magnitude` itself,
// where rounding to nearest twice could land on a false tie (2^63 + 2^39 + 1 -> f32).
double RoundToOddDouble(uint64_t magnitude) {
  const int cut = std::max(0, static_cast<int>(std::bit_width(magnitude)) - 53);
  if (cut == 0) return static_cast<double>(magnitude);  // exact
  const uint64_t kept = (magnitude >> cut) << cut;
  return static_cast<double>(kept != magnitude ? kept | (uint64_t{1} << cut) : kept);
}

}  // namespace

Value Value::Array(Shape shape, std::vector<double> values) {
  Value value;
  value.shape = std::move(shape);
  if (value.HoldsIntegers()) {
    const PrimitiveType type = value.shape.element_type();
    value.integers.reserve(values.size());
    for (double v : values) value.integers.push_back(IntegerFromDouble(v, type));
  } else {
    value.values = std::move(values);
  }
  return value;
}

Value Value::Integers(Shape shape, std::vector<int64_t> integers) {
  Value value;
  value.shape = std::move(shape);
  const PrimitiveType type = value.shape.element_type();
  for (int64_t& element : integers)
    element = WrapToIntegerType(static_cast<uint64_t>(element), type);
  value.integers = std::move(integers);
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

Value Value::Zeros(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Value> elements;
    for (const Shape& element : shape.tuple_shapes()) elements.push_back(Zeros(element));
    Value value = Tuple(std::move(elements));
    value.shape = shape;  // keep the layouts as written
    return value;
  }
  Value value;
  value.shape = shape;
  const size_t count =
      static_cast<size_t>(std::max<int64_t>(shape.IsArray() ? shape.ElementCount() : 0, 0));
  if (value.HoldsIntegers()) {
    value.integers.assign(count, 0);
  } else {
    value.values.assign(count, 0.0);
  }
  return value;
}

Value Value::ScalarAt(size_t i) const {
  Value scalar = Zeros(Shape::MakeScalar(shape.element_type()));
  CopyElement(*this, i, scalar, 0);
  return scalar;
}

std::vector<double> Value::AsDoubles() const {
  if (!HoldsIntegers()) return values;
  std::vector<double> doubles(integers.size());
  for (size_t i = 0; i < doubles.size(); ++i) {
    doubles[i] = IntegerToDouble(integers[i], shape.element_type());
  }
  return doubles;
}

Value ValueFromLiteral(const Literal& literal) {
  const PrimitiveType type = literal.shape.element_type();
  if (IsPredOrIntegralType(type)) return Value::Integers(literal.shape, literal.integers);
  std::vector<double> values = literal.values;
  for (double& v : values) v = RoundToElementType(v, type);  // f32 constant(0.1) is f32's 0.1
  return Value::Array(literal.shape, std::move(values));
}

double RoundToElementType(double value, PrimitiveType type) {
  if (IsPredOrIntegralType(type)) return IntegerToDouble(IntegerFromDouble(value, type), type);
  if (type == PrimitiveType::kF64) return value;
  std::optional<DType> dtype = ToDType(type);
  if (!dtype.has_value()) return value;
  return RoundToDType(value, *dtype, Overflow::kIeee);
}

int64_t ConvertFloatToInteger(double value, PrimitiveType type) {
  if (type == PrimitiveType::kPred) return value != 0 ? 1 : 0;  // NaN != 0: true, as C++
  if (std::isnan(value)) return 0;
  // The type's extremes as bits: 2^63 - 1 and 2^64 - 1 have no double. [low, high) are exact
  // doubles, so the comparisons are exact.
  const int width = PrimitiveTypeByteSize(type) * 8;
  const bool is_signed = IsSignedIntegralType(type);
  const uint64_t max_bits = ~uint64_t{0} >> (64 - width + (is_signed ? 1 : 0));
  const uint64_t min_bits = is_signed ? ~max_bits : 0;  // -2^(width-1) sign-extended, or 0
  const auto [low, high] = IntegerRange(type);
  const double truncated = std::trunc(value);
  if (truncated < low) return WrapToIntegerType(min_bits, type);
  if (truncated >= high) return WrapToIntegerType(max_bits, type);
  return IntegerFromDouble(truncated, type);
}

double IntegerToFloat(int64_t element, PrimitiveType from, PrimitiveType to) {
  if (to == PrimitiveType::kF64) return IntegerToDouble(element, from);  // one rounding, to f64
  const bool negative = IsSignedIntegralType(from) && element < 0;
  // |element| as a uint64: 0 - bits is the magnitude of a negative int64, INT64_MIN included.
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(element) : static_cast<uint64_t>(element);
  const double odd = RoundToOddDouble(magnitude);
  return RoundToElementType(negative ? -odd : odd, to);
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
      if (type != PrimitiveType::kPred && (v < low || v >= high)) {
        return InvalidArgument("%s: element %zu is %g, out of range for %s", what.c_str(), i, v,
                               PrimitiveTypeName(type));
      }
    }
    values[i] = v;
  }
  return Value::Array(shape, std::move(values));  // integral and in range: converted exactly
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
  const size_t size = static_cast<size_t>(PrimitiveTypeByteSize(type));
  const size_t count = static_cast<size_t>(value.element_count());
  bytes.resize(count * size);
  std::optional<DType> dtype = ToDType(type);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* out = bytes.data() + i * size;
    if (dtype.has_value()) {
      StoreElement(*dtype, value.values[i], out, 0);
    } else {
      // pred and integers: the low bytes of the two's complement bits, little-endian.
      const uint64_t bits = static_cast<uint64_t>(value.integers[i]);
      for (size_t b = 0; b < size; ++b) out[b] = static_cast<uint8_t>(bits >> (8 * b));
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
  std::vector<int64_t> integers(static_cast<size_t>(tensor.element_count()));
  bool all_zero = true;
  for (size_t i = 0; i < integers.size(); ++i) {
    integers[i] = static_cast<int64_t>(std::floor(tensor.GetPhysical(static_cast<int64_t>(i))));
    all_zero = all_zero && integers[i] == 0;
  }
  if (all_zero && !integers.empty()) integers[0] = 1;
  return Value::Integers(shape, std::move(integers));
}

}  // namespace fp8dot::hlo
