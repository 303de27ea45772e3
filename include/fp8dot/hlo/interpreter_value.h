// Values the HLO interpreter computes with: an array (shape + elements as doubles, in row-major
// logical order) or a tuple of values, and the conversions to and from HostTensor / .npy.
//
// Why doubles: a double holds pred (0/1), every integer up to 2^53 and every float type fp8dot
// knows (f8e4m3fn .. f64) exactly. After every op the interpreter rounds each element back to its
// element type (RoundToElementType), so a chain of ops gives the values XLA's CPU backend gives
// for the same element types (bit-exact for the arithmetic ops; transcendental functions may
// differ by an ulp from XLA's own approximations). Integer ops compute in 64-bit two's complement,
// so s8..s32/u8..u32 are exact; s64/u64 values beyond 2^53 in magnitude cannot be held exactly,
// and the interpreter fails (UNIMPLEMENTED, naming the instruction) on any such value instead of
// giving a wrong answer; the parser rejects integer literals a double cannot hold.
//
// The layout (minor_to_major) of a shape says how XLA would store the array; it never changes
// the logical values, except through bitcast, which the interpreter evaluates in physical order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fp8dot/hlo/shape.h"
#include "fp8dot/status.h"
#include "fp8dot/tensor.h"

namespace fp8dot::hlo {

struct Value {
  Shape shape;                  // an array or a tuple shape
  std::vector<double> values;   // arrays: shape.ElementCount() elements, row-major logical order
  std::vector<Value> elements;  // tuples: one per tuple_shapes()

  static Value Array(Shape shape, std::vector<double> values);
  static Value Scalar(PrimitiveType type, double value);
  static Value Tuple(std::vector<Value> elements);

  bool IsTuple() const { return shape.IsTuple(); }
  int64_t element_count() const { return static_cast<int64_t>(values.size()); }
  // "f32[2,3]{1,0}" or "(f32[2]{0}, s32[])".
  std::string ShapeString() const { return shape.ToString(); }
};

// Rounds one element to `type`: floats with RoundToDType(.., Overflow::kIeee) (e4m3fn overflow ->
// NaN, e5m2/f16/bf16 -> inf), integers wrap two's complement to their width (NaN -> 0), pred is
// 0/1 (non-zero -> 1).
double RoundToElementType(double value, PrimitiveType type);
// XLA's float -> integer convert: truncate toward zero, saturate at the type's range, NaN -> 0.
double ConvertFloatToInteger(double value, PrimitiveType type);

// An f8e4m3fn/f8e5m2/bf16/f16/f32/f64 array value as a row-major HostTensor of that type.
// Fails (naming `what`) for pred and integer values and for tuples.
StatusOr<HostTensor> ValueToHostTensor(const Value& value, const std::string& what = "value");
// A HostTensor (any layout) as a value of `shape` (layout taken from `shape`). The dims must match;
// the element types must match too, except that a float tensor may feed a pred or integer shape
// when every element is integral (e.g. indices stored as f32 .npy): they are converted.
StatusOr<Value> ValueFromHostTensor(const HostTensor& tensor, const Shape& shape,
                                    const std::string& what = "value");

// The elements encoded in the element type's little-endian bytes (pred: one byte 0/1), in
// row-major order: what XLA would store for a row-major array. For checksums.
std::vector<uint8_t> EncodeValueBytes(const Value& value);

// The interpreter's default limit on the elements of one array (InterpreterOptions::max_elements):
// values hold doubles, so 2^28 elements are 2 GiB.
inline constexpr int64_t kDefaultMaxElements = int64_t{1} << 28;

// A random value of `shape` (tuples element by element), never all zeros. An array of more than
// kDefaultMaxElements elements is RESOURCE_EXHAUSTED, before anything is allocated:
//   floats: arrays uniform in [-4, 4] (random.h's symmetric distribution), scalars in [0, 4]
//           (scalars are mostly scales), rounded to the element type;
//   integers: uniform in [-3, 3] (signed) or [0, 3] (unsigned); pred: 0 or 1.
StatusOr<Value> RandomValue(const Shape& shape, uint64_t seed);

}  // namespace fp8dot::hlo
