// Element types and shapes of the HLO IR (include/fp8dot/hlo/shape.h).
#include "fp8dot/hlo/shape.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace fp8dot::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  const char* name;
  int bytes;
};

constexpr TypeInfo kTypes[] = {
    {PrimitiveType::kPred, "pred", 1},     {PrimitiveType::kS8, "s8", 1},
    {PrimitiveType::kS16, "s16", 2},       {PrimitiveType::kS32, "s32", 4},
    {PrimitiveType::kS64, "s64", 8},       {PrimitiveType::kU8, "u8", 1},
    {PrimitiveType::kU16, "u16", 2},       {PrimitiveType::kU32, "u32", 4},
    {PrimitiveType::kU64, "u64", 8},       {PrimitiveType::kF16, "f16", 2},
    {PrimitiveType::kBF16, "bf16", 2},     {PrimitiveType::kF32, "f32", 4},
    {PrimitiveType::kF64, "f64", 8},       {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 1},
    {PrimitiveType::kF8E5M2, "f8e5m2", 1}, {PrimitiveType::kToken, "token", 0},
};

void AppendInts(std::string* out, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    *out += std::to_string(values[i]);
  }
}

}  // namespace

const char* PrimitiveTypeName(PrimitiveType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info.name;
  }
  return type == PrimitiveType::kTuple ? "tuple" : "invalid";
}

StatusOr<PrimitiveType> ParsePrimitiveType(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (name == info.name) return info.type;
  }
  return InvalidArgument("unknown element type '%.*s'", static_cast<int>(name.size()), name.data());
}

bool IsFloatingPointType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E5M2:
      return true;
    default:
      return false;
  }
}

bool IsSignedIntegralType(PrimitiveType type) {
  return type == PrimitiveType::kS8 || type == PrimitiveType::kS16 || type == PrimitiveType::kS32 ||
         type == PrimitiveType::kS64;
}

bool IsIntegralType(PrimitiveType type) {
  return IsSignedIntegralType(type) || type == PrimitiveType::kU8 || type == PrimitiveType::kU16 ||
         type == PrimitiveType::kU32 || type == PrimitiveType::kU64;
}

bool IsPredOrIntegralType(PrimitiveType type) {
  return type == PrimitiveType::kPred || IsIntegralType(type);
}

int64_t WrapToIntegerType(uint64_t bits, PrimitiveType type) {
  if (type == PrimitiveType::kPred) return bits != 0 ? 1 : 0;
  const int width = PrimitiveTypeByteSize(type) * 8;
  if (width >= 64 || width == 0) return static_cast<int64_t>(bits);  // 0: not an integer type
  const int unused = 64 - width;
  // Shift the type's bits to the top, then back: arithmetic (sign-extending) for signed types.
  return IsSignedIntegralType(type) ? static_cast<int64_t>(bits << unused) >> unused
                                    : static_cast<int64_t>((bits << unused) >> unused);
}

int64_t IntegerFromDouble(double value, PrimitiveType type) {
  if (type == PrimitiveType::kPred) return value != 0 ? 1 : 0;  // NaN != 0: true, as C++
  if (!std::isfinite(value)) return 0;
  constexpr double kTwoTo63 = 9223372036854775808.0;
  constexpr double kTwoTo64 = 18446744073709551616.0;
  double m = std::trunc(value);
  if (std::fabs(m) >= kTwoTo63) {  // beyond int64: reduce modulo 2^64 first (exact in doubles)
    m = std::fmod(m, kTwoTo64);
    if (m < 0) m += kTwoTo64;
    if (m >= kTwoTo63) m -= kTwoTo64;  // [2^63, 2^64) -> [-2^63, 0): the same bits
  }
  return WrapToIntegerType(static_cast<uint64_t>(static_cast<int64_t>(m)), type);
}

double IntegerToDouble(int64_t element, PrimitiveType type) {
  return IsSignedIntegralType(type) ? static_cast<double>(element)
                                    : static_cast<double>(static_cast<uint64_t>(element));
}

bool IsFp8Type(PrimitiveType type) {
  return type == PrimitiveType::kF8E4M3FN || type == PrimitiveType::kF8E5M2;
}

int PrimitiveTypeByteSize(PrimitiveType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info.bytes;
  }
  return 0;
}

std::optional<DType> ToDType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF8E4M3FN:
      return DType::kF8E4M3FN;
    case PrimitiveType::kF8E5M2:
      return DType::kF8E5M2;
    case PrimitiveType::kBF16:
      return DType::kBF16;
    case PrimitiveType::kF16:
      return DType::kF16;
    case PrimitiveType::kF32:
      return DType::kF32;
    case PrimitiveType::kF64:
      return DType::kF64;
    default:
      return std::nullopt;
  }
}

PrimitiveType FromDType(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return PrimitiveType::kF8E4M3FN;
    case DType::kF8E5M2:
      return PrimitiveType::kF8E5M2;
    case DType::kBF16:
      return PrimitiveType::kBF16;
    case DType::kF16:
      return PrimitiveType::kF16;
    case DType::kF32:
      return PrimitiveType::kF32;
    case DType::kF64:
      return PrimitiveType::kF64;
  }
  return PrimitiveType::kInvalid;
}

Shape Shape::MakeArray(PrimitiveType type, std::vector<int64_t> dims) {
  std::vector<int64_t> layout;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) layout.push_back(i);
  return MakeArray(type, std::move(dims), std::move(layout));
}

Shape Shape::MakeArray(PrimitiveType type, std::vector<int64_t> dims,
                       std::vector<int64_t> minor_to_major) {
  Shape shape;
  shape.element_type_ = type;
  shape.dims_ = std::move(dims);
  shape.minor_to_major_ = std::move(minor_to_major);
  return shape;
}

Shape Shape::MakeTuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = PrimitiveType::kTuple;
  shape.tuple_shapes_ = std::move(elements);
  return shape;
}

int64_t Shape::ElementCount() const {
  int64_t count = 1;
  for (int64_t d : dims_) {
    if (d < 0) return 0;
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) {
      return std::numeric_limits<int64_t>::max();
    }
    count *= d;
  }
  return count;
}

std::optional<int64_t> Shape::CheckedElementCount() const {
  int64_t count = 1;
  for (int64_t d : dims_) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return std::nullopt;
  }
  return count;
}

std::optional<int64_t> Shape::CheckedByteSize() const {
  int64_t bytes = 0;
  if (IsTuple()) {
    for (const Shape& element : tuple_shapes_) {
      const std::optional<int64_t> element_bytes = element.CheckedByteSize();
      if (!element_bytes.has_value() || __builtin_add_overflow(bytes, *element_bytes, &bytes)) {
        return std::nullopt;
      }
    }
    return bytes;
  }
  const std::optional<int64_t> count = CheckedElementCount();
  if (!count.has_value() ||
      __builtin_mul_overflow(*count, int64_t{PrimitiveTypeByteSize(element_type_)}, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

bool Shape::has_default_layout() const {
  const int64_t r = rank();
  if (static_cast<int64_t>(minor_to_major_.size()) != r) return false;
  for (int64_t i = 0; i < r; ++i) {
    if (minor_to_major_[static_cast<size_t>(i)] != r - 1 - i) return false;
  }
  return layout_suffix_.empty();
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i > 0) out += ", ";
      out += tuple_shapes_[i].ToString(print_layout);
    }
    return out + ")";
  }
  std::string out = PrimitiveTypeName(element_type_);
  out += '[';
  AppendInts(&out, dims_);
  out += ']';
  if (print_layout && !dims_.empty() && (!minor_to_major_.empty() || !layout_suffix_.empty())) {
    out += '{';
    AppendInts(&out, minor_to_major_);
    if (!layout_suffix_.empty()) {
      out += ':';
      out += layout_suffix_;
    }
    out += '}';
  }
  return out;
}

bool Shape::Compatible(const Shape& a, const Shape& b) {
  if (a.element_type_ != b.element_type_) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes_.size() != b.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < a.tuple_shapes_.size(); ++i) {
      if (!Compatible(a.tuple_shapes_[i], b.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return a.dims_ == b.dims_;
}

bool Shape::SameDimensions(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes_.size() != b.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < a.tuple_shapes_.size(); ++i) {
      if (!SameDimensions(a.tuple_shapes_[i], b.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return a.dims_ == b.dims_;
}

bool operator==(const Shape& a, const Shape& b) {
  if (!Shape::Compatible(a, b)) return false;
  if (a.IsTuple()) {
    for (size_t i = 0; i < a.tuple_shapes_.size(); ++i) {
      if (!(a.tuple_shapes_[i] == b.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return a.minor_to_major_ == b.minor_to_major_ && a.layout_suffix_ == b.layout_suffix_;
}

}  // namespace fp8dot::hlo
