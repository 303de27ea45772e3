// HLO element types and shapes: arrays (element type, dims, layout) and tuples, printed and parsed
// in XLA's notation: "f8e4m3fn[16,32]{1,0}", "(f32[2]{0}, s32[])", "f32[8,128]{1,0:T(8,128)}".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot::hlo {

// XLA's PrimitiveType, restricted to what fp8dot parses. Names are the HLO spellings.
enum class PrimitiveType {
  kInvalid,
  kPred,
  kS8,
  kS16,
  kS32,
  kS64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E4M3FN,
  kF8E5M2,
  kToken,  // token[]: ordering tokens (after-all, infeed); no data
  kTuple,  // the element type of a tuple shape
};

// "pred", "s32", "f8e4m3fn", "bf16", "token", "tuple"; "invalid" for kInvalid.
const char* PrimitiveTypeName(PrimitiveType type);
// Exact HLO spelling (lower case). Fails on anything else, including "tuple" and "invalid".
StatusOr<PrimitiveType> ParsePrimitiveType(std::string_view name);

bool IsFloatingPointType(PrimitiveType type);  // f16 bf16 f32 f64 f8*
bool IsIntegralType(PrimitiveType type);       // s* u*
bool IsSignedIntegralType(PrimitiveType type);
bool IsFp8Type(PrimitiveType type);
// pred and the integer types: their elements are held exactly as int64_t (Literal, the
// interpreter's Value) in one form, the two's complement bits extended from the type's width:
// sign-extended for s8..s64, zero-extended for u8..u32 and pred (0/1), u64 as its bit pattern
// (values >= 2^63 read as negative int64). So signed types compare as int64 and unsigned ones
// as uint64, and any wrapping uint64 arithmetic on the bits is two's complement arithmetic.
bool IsPredOrIntegralType(PrimitiveType type);
// Writes an integer element: `bits` wrapped to `type`'s width in that form (pred: non-zero -> 1).
int64_t WrapToIntegerType(uint64_t bits, PrimitiveType type);
// The integral part of `value` wrapped to `type` (modulo 2^width, as a C cast does; NaN and inf
// -> 0; pred: non-zero -> 1). Exact for every integer a double holds.
int64_t IntegerFromDouble(double value, PrimitiveType type);
// An integer element (the form above) as the nearest double: exact up to 2^53 in magnitude, u64
// read unsigned. For printing sums and metrics; conversions use the interpreter's IntegerToFloat.
double IntegerToDouble(int64_t element, PrimitiveType type);
// Bytes per element; 0 for token/tuple/invalid. pred is 1 byte, like XLA.
int PrimitiveTypeByteSize(PrimitiveType type);

// The fp8dot::DType of a floating point element type (f8e4m3fn, f8e5m2, bf16, f16, f32, f64);
// nullopt for pred, integers, token and tuple.
std::optional<DType> ToDType(PrimitiveType type);
PrimitiveType FromDType(DType type);

// An array shape (element type, dims, layout) or a tuple of shapes.
//
// The layout is XLA's minor_to_major list. The parser gives every array shape a layout: the one
// written in the text or, when none is written, the default row-major {rank-1,...,0}. Tiling and
// memory-space suffixes ("{1,0:T(8,128)S(1)}") are kept verbatim in layout_suffix() and printed
// back, but carry no meaning in fp8dot.
class Shape {
 public:
  Shape() = default;  // an invalid shape
  // An array shape with the default (row-major) layout.
  static Shape MakeArray(PrimitiveType type, std::vector<int64_t> dims);
  static Shape MakeArray(PrimitiveType type, std::vector<int64_t> dims,
                         std::vector<int64_t> minor_to_major);
  static Shape MakeScalar(PrimitiveType type) { return MakeArray(type, {}); }
  static Shape MakeTuple(std::vector<Shape> elements);

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType type) { element_type_ = type; }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsArray() const {
    return element_type_ != PrimitiveType::kTuple && element_type_ != PrimitiveType::kInvalid &&
           element_type_ != PrimitiveType::kToken;
  }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  // Arrays.
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  // Product of the dims; saturates at INT64_MAX instead of overflowing.
  int64_t ElementCount() const;
  // Product of the dims; nullopt when it does not fit in int64 or a dim is negative.
  std::optional<int64_t> CheckedElementCount() const;
  // Bytes of an array (elements x PrimitiveTypeByteSize), or of all of a tuple's arrays;
  // nullopt on int64 overflow or a negative dim.
  std::optional<int64_t> CheckedByteSize() const;
  std::vector<int64_t>& mutable_dimensions() { return dims_; }
  const std::vector<int64_t>& minor_to_major() const { return minor_to_major_; }
  void set_minor_to_major(std::vector<int64_t> layout) { minor_to_major_ = std::move(layout); }
  const std::string& layout_suffix() const { return layout_suffix_; }
  void set_layout_suffix(std::string suffix) { layout_suffix_ = std::move(suffix); }
  bool has_default_layout() const;

  // Tuples.
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[static_cast<size_t>(i)]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_shapes_; }

  // "f32[2,3]{1,0}" (with layout) or "f32[2,3]"; scalars print no layout: "f32[]".
  std::string ToString(bool print_layout = true) const;

  // Same element types and dims (recursively for tuples), layouts ignored.
  static bool Compatible(const Shape& a, const Shape& b);
  // Same dims (recursively), element types and layouts ignored.
  static bool SameDimensions(const Shape& a, const Shape& b);
  // Compatible() and the same layouts.
  friend bool operator==(const Shape& a, const Shape& b);

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<int64_t> minor_to_major_;
  std::string layout_suffix_;
  std::vector<Shape> tuple_shapes_;
};

}  // namespace fp8dot::hlo
