// Values the HLO interpreter computes with: an array (shape + its elements in row-major logical
// order) or a tuple of values, and the conversions to and from HostTensor / .npy.
//
// Elements are held exactly, in one of two vectors as the element type says:
//   float types      `values`, doubles: a double holds every float type fp8dot knows (f8e4m3fn ..
//                    f64). After every op the interpreter rounds each element back to its element
//                    type (RoundToElementType), so a chain of ops gives the values XLA's CPU
//                    backend gives (bit-exact for the arithmetic ops; transcendental functions
//                    may differ by an ulp from XLA's own approximations).
//   pred, integers   `integers`, int64 in shape.h's form (two's complement bits sign-extended for
//                    s8..s64, zero-extended for u8..u32 and pred, u64 as its bit pattern). Integer
//                    ops compute on these bits and wrap to the width (WrapToIntegerType), so every
//                    value of every integer type, s64 and u64 included, is exact.
// Two vectors rather than one of doubles: a double holds integers only up to 2^53. Data-movement
// ops copy elements without looking at them (CopyElement), so they are written once for both.
//
// The layout (minor_to_major) of a shape says how XLA would store the array; it never changes
// the logical values, except through bitcast, which the interpreter evaluates in physical order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fp8dot/hlo/hlo_ir.h"
#include "fp8dot/hlo/shape.h"
#include "fp8dot/status.h"
#include "fp8dot/tensor.h"

namespace fp8dot::hlo {

struct Value {
  Shape shape;  // an array or a tuple shape
  // Arrays: shape.ElementCount() elements, row-major logical order, in one of (HoldsIntegers()):
  std::vector<double> values;     // float types
  std::vector<int64_t> integers;  // pred and integer types (shape.h's form)
  std::vector<Value> elements;    // tuples: one per tuple_shapes()

  // An array from doubles. For pred and integer shapes each value is truncated and wrapped
  // (IntegerFromDouble): exact for integers up to 2^53; Integers() takes any 64-bit value.
  static Value Array(Shape shape, std::vector<double> values);
  // A pred or integer array; each element is wrapped to the type (WrapToIntegerType).
  static Value Integers(Shape shape, std::vector<int64_t> integers);
  static Value Scalar(PrimitiveType type, double value);
  static Value Tuple(std::vector<Value> elements);
  // Zeros of `shape` (tuples element by element; a non-array, non-tuple shape has no elements).
  static Value Zeros(const Shape& shape);

  bool IsTuple() const { return shape.IsTuple(); }
  bool HoldsIntegers() const { return IsPredOrIntegralType(shape.element_type()); }
  int64_t element_count() const {
    return static_cast<int64_t>(HoldsIntegers() ? integers.size() : values.size());
  }
  // Element i as a scalar value of the same element type.
  Value ScalarAt(size_t i) const;
  // The elements as doubles: floats as held, integers rounded to the nearest double (exact up to
  // 2^53). For sums, error metrics and tests; the interpreter never computes with these.
  std::vector<double> AsDoubles() const;
  // "f32[2,3]{1,0}" or "(f32[2]{0}, s32[])".
  std::string ShapeString() const { return shape.ToString(); }
};

// Copies element `i` of `from` to element `j` of `to`, which must hold the same kind of elements
// (both floats, or both pred/integers). The one element access of the data-movement ops.
inline void CopyElement(const Value& from, size_t i, Value& to, size_t j) {
  if (from.HoldsIntegers()) {
    to.integers[j] = from.integers[i];
  } else {
    to.values[j] = from.values[i];
  }
}

// A constant's value: its literal, floats rounded to the element type.
Value ValueFromLiteral(const Literal& literal);

// Rounds one element to `type`: floats with RoundToDType(.., Overflow::kIeee) (e4m3fn overflow ->
// NaN, e5m2/f16/bf16 -> inf). For pred and integer types, the double nearest IntegerFromDouble's
// result (truncated, wrapped; NaN -> 0; pred is 0/1, non-zero -> 1).
double RoundToElementType(double value, PrimitiveType type);
// XLA's float -> integer convert: truncate toward zero, saturate at the type's range (+-inf ->
// max/min: 2^63 - 1 for s64, 2^64 - 1 for u64), NaN -> 0; pred: non-zero (NaN too) -> 1. The
// result is in shape.h's form.
int64_t ConvertFloatToInteger(double value, PrimitiveType type);
// XLA's integer -> float convert: `element` (shape.h's form, of type `from`) correctly rounded to
// the float type `to` (one rounding, never through f64 first: u64 2^64 - 1 -> f32 is 2^64).
double IntegerToFloat(int64_t element, PrimitiveType from, PrimitiveType to);

// An f8e4m3fn/f8e5m2/bf16/f16/f32/f64 array value as a row-major HostTensor of that type.
// Fails (naming `what`) for pred and integer values and for tuples.
StatusOr<HostTensor> ValueToHostTensor(const Value& value, const std::string& what = "value");
// A HostTensor (any layout) as a value of `shape` (layout taken from `shape`). The dims must match;
// the element types must match too, except that a float tensor may feed a pred or integer shape
// when every element is integral and in the type's range (e.g. indices stored as f32 .npy): they
// are converted exactly.
StatusOr<Value> ValueFromHostTensor(const HostTensor& tensor, const Shape& shape,
                                    const std::string& what = "value");

// The elements encoded in the element type's little-endian bytes (pred: one byte 0/1; integers
// their exact two's complement bytes), in row-major order: what XLA would store for a row-major
// array. For checksums and .npy outputs.
std::vector<uint8_t> EncodeValueBytes(const Value& value);

// The interpreter's default limit on the elements of one array (InterpreterOptions::max_elements):
// elements take 8 bytes (double or int64), so 2^28 elements are 2 GiB.
inline constexpr int64_t kDefaultMaxElements = int64_t{1} << 28;

// A random value of `shape` (tuples element by element), never all zeros. An array of more than
// kDefaultMaxElements elements is RESOURCE_EXHAUSTED, before anything is allocated:
//   floats: arrays uniform in [-4, 4] (random.h's symmetric distribution), scalars in [0, 4]
//           (scalars are mostly scales), rounded to the element type;
//   integers: uniform in [-3, 3] (signed) or [0, 3] (unsigned); pred: 0 or 1.
StatusOr<Value> RandomValue(const Shape& shape, uint64_t seed);

}  // namespace fp8dot::hlo
