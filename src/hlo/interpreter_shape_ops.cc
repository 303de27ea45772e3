// Data-movement ops of the HLO interpreter: broadcast, reshape, bitcast, transpose, slice,
// dynamic-slice, dynamic-update-slice, concatenate, pad, iota, reverse. Values are in row-major
// logical order, so only bitcast looks at layouts. The ops copy elements without looking at them
// (CopyElement), so one implementation serves floats and pred/integers alike.
#include <algorithm>
#include <limits>

#include "hlo/interpreter_ops.h"

namespace fp8dot::hlo::internal {
namespace {

Status CheckArray(const HloInstruction& instruction, const Value& operand, const char* role) {
  if (operand.IsTuple() || operand.element_count() != operand.shape.ElementCount()) {
    return InvalidArgument("%s: %s must be an array, got %s", instruction.NameForErrors().c_str(),
                           role, operand.ShapeString().c_str());
  }
  return OkStatus();
}

Status CheckResultShape(const HloInstruction& instruction) {
  if (!instruction.shape().IsArray()) {
    return InvalidArgument("%s: result must be an array, got %s",
                           instruction.NameForErrors().c_str(),
                           instruction.shape().ToString().c_str());
  }
  return OkStatus();
}

// Elements are copied as they are held, so the result's element type must be the operand's (the
// verifier checks this for most ops, not for reverse).
Status CheckElementType(const HloInstruction& instruction, const Value& operand) {
  if (operand.shape.element_type() != instruction.shape().element_type()) {
    return InvalidArgument("%s: the operand %s and the result %s differ in element type",
                           instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
                           instruction.shape().ToString().c_str());
  }
  return OkStatus();
}

// Zeros of the result's shape, to copy `operand`'s elements into.
StatusOr<Value> ResultFor(const HloInstruction& instruction, const Value& operand) {
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  FP8_RETURN_IF_ERROR(CheckElementType(instruction, operand));
  return Value::Zeros(instruction.shape());
}

// The start indices of a dynamic-slice / dynamic-update-slice (operands first..), clamped to
// [0, operand_dim - size] as XLA does.
StatusOr<std::vector<int64_t>> ClampedStarts(const HloInstruction& instruction,
                                             const std::vector<const Value*>& operands,
                                             size_t first, const std::vector<int64_t>& dims,
                                             const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts(dims.size());
  if (operands.size() != first + dims.size()) {
    return InvalidArgument("%s: expected %zu scalar start indices, got %zu",
                           instruction.NameForErrors().c_str(), dims.size(),
                           operands.size() - first);
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    const Value& index = *operands[first + d];
    if (index.IsTuple() || !IsIntegralType(index.shape.element_type()) ||
        index.element_count() != 1) {
      return InvalidArgument("%s: start index %zu must be an integer scalar, got %s",
                             instruction.NameForErrors().c_str(), d, index.ShapeString().c_str());
    }
    if (sizes[d] > dims[d] || sizes[d] < 0) {
      return InvalidArgument("%s: size %lld of dim %zu exceeds the operand's %lld",
                             instruction.NameForErrors().c_str(), static_cast<long long>(sizes[d]),
                             d, static_cast<long long>(dims[d]));
    }
    starts[d] = std::clamp(IndexAt(index, 0), int64_t{0}, dims[d] - sizes[d]);
  }
  return starts;
}

// `value`'s elements (row-major logical order) in the physical order of `shape`'s layout, or,
// with to_physical false, elements in that physical order back in logical order. The result has
// `shape`.
Value Reordered(const Value& value, const Shape& shape, bool to_physical) {
  Value out = value;
  out.shape = shape;
  if (shape.has_default_layout() || shape.rank() < 2) return out;
  const std::vector<int64_t>& dims = shape.dimensions();
  std::vector<int64_t> physical_strides(dims.size());
  int64_t stride = 1;
  for (int64_t d : shape.minor_to_major()) {
    physical_strides[static_cast<size_t>(d)] = stride;
    stride *= dims[static_cast<size_t>(d)];
  }
  ForEachIndex(dims, [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * physical_strides[d];
    if (to_physical) {
      CopyElement(value, static_cast<size_t>(linear), out, static_cast<size_t>(offset));
    } else {
      CopyElement(value, static_cast<size_t>(offset), out, static_cast<size_t>(linear));
    }
  });
  return out;
}

bool LayoutIsValid(const Shape& shape) {
  if (shape.has_default_layout()) return true;
  return ValidateLayout(shape.dimensions(), shape.minor_to_major()).ok();
}

}  // namespace

Status CheckOperands(const HloInstruction& instruction,
                     std::initializer_list<const Value*> operands, PrimitiveType type,
                     int64_t count) {
  for (const Value* operand : operands) {
    if (operand->IsTuple() || operand->shape.element_type() != type ||
        operand->element_count() != count) {
      return InvalidArgument("%s: operand %s does not match the result %s",
                             instruction.NameForErrors().c_str(), operand->ShapeString().c_str(),
                             instruction.shape().ToString().c_str());
    }
  }
  return OkStatus();
}

int64_t IndexAt(const Value& indices, size_t i) {
  const int64_t index = indices.integers[i];
  const bool huge_u64 = indices.shape.element_type() == PrimitiveType::kU64 && index < 0;
  return huge_u64 ? std::numeric_limits<int64_t>::max() : index;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

void ForEachIndex(const std::vector<int64_t>& dims,
                  const std::function<void(const std::vector<int64_t>&, int64_t)>& fn) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count <= 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    fn(index, linear);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

StatusOr<Value> EvalBroadcast(const HloInstruction& instruction, const Value& operand) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Shape& shape = instruction.shape();
  const std::vector<int64_t>& mapping = instruction.dimensions();
  if (static_cast<int64_t>(mapping.size()) != operand.shape.rank()) {
    return InvalidArgument("%s: dimensions= has %zu entries for an operand of rank %lld",
                           instruction.NameForErrors().c_str(), mapping.size(),
                           static_cast<long long>(operand.shape.rank()));
  }
  for (size_t i = 0; i < mapping.size(); ++i) {
    if (mapping[i] < 0 || mapping[i] >= shape.rank() ||
        shape.dimensions(mapping[i]) != operand.shape.dimensions(static_cast<int64_t>(i))) {
      return InvalidArgument("%s: operand dim %zu does not map onto the result %s",
                             instruction.NameForErrors().c_str(), i, shape.ToString().c_str());
    }
  }
  FP8_ASSIGN_OR_RETURN(Value out, ResultFor(instruction, operand));
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape.dimensions());
  ForEachIndex(shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;
    for (size_t i = 0; i < mapping.size(); ++i) {
      offset += index[static_cast<size_t>(mapping[i])] * in_strides[i];
    }
    CopyElement(operand, static_cast<size_t>(offset), out, static_cast<size_t>(linear));
  });
  return out;
}

StatusOr<Value> EvalReshape(const HloInstruction& instruction, const Value& operand) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  if (operand.element_count() != instruction.shape().ElementCount()) {
    return InvalidArgument("%s: cannot reshape %s (%lld elements) to %s",
                           instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
                           static_cast<long long>(operand.element_count()),
                           instruction.shape().ToString().c_str());
  }
  FP8_RETURN_IF_ERROR(CheckElementType(instruction, operand));
  Value out = operand;
  out.shape = instruction.shape();
  return out;
}

// A bitcast reinterprets the buffer: the operand's elements in its physical order (its layout)
// are read back in the physical order of the result's layout. With default layouts on both
// sides this is a reshape.
StatusOr<Value> EvalBitcast(const HloInstruction& instruction, const Value& operand) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Shape& shape = instruction.shape();
  if (operand.shape.element_type() != shape.element_type() ||
      operand.element_count() != shape.ElementCount()) {
    return Unimplemented(
        "%s: bitcast from %s to %s changes the element type or count; the interpreter runs only "
        "bitcasts that keep both",
        instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
        shape.ToString().c_str());
  }
  if (!LayoutIsValid(operand.shape) || !LayoutIsValid(shape)) {
    return InvalidArgument("%s: bitcast with an invalid layout (%s -> %s)",
                           instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
                           shape.ToString().c_str());
  }
  Value physical = Reordered(operand, operand.shape, /*to_physical=*/true);
  physical.shape = shape;  // the same buffer, read with the result's layout
  return Reordered(physical, shape, /*to_physical=*/false);
}

StatusOr<Value> EvalTranspose(const HloInstruction& instruction, const Value& operand) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Shape& shape = instruction.shape();
  const std::vector<int64_t>& permutation = instruction.dimensions();
  if (static_cast<int64_t>(permutation.size()) != operand.shape.rank() ||
      shape.rank() != operand.shape.rank()) {
    return InvalidArgument("%s: dimensions= must be a permutation of the operand's %lld dims",
                           instruction.NameForErrors().c_str(),
                           static_cast<long long>(operand.shape.rank()));
  }
  // A true permutation whose sizes are the result's: {0,0} would read past the operand.
  std::vector<bool> seen(permutation.size(), false);
  for (size_t i = 0; i < permutation.size(); ++i) {
    const int64_t p = permutation[i];
    if (p < 0 || p >= operand.shape.rank() || seen[static_cast<size_t>(p)] ||
        operand.shape.dimensions(p) != shape.dimensions(static_cast<int64_t>(i))) {
      return InvalidArgument("%s: dimensions= is not a permutation taking %s to %s",
                             instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
                             shape.ToString().c_str());
    }
    seen[static_cast<size_t>(p)] = true;
  }
  FP8_ASSIGN_OR_RETURN(Value out, ResultFor(instruction, operand));
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape.dimensions());
  ForEachIndex(shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;  // output dim i is operand dim permutation[i]
    for (size_t i = 0; i < permutation.size(); ++i) {
      offset += index[i] * in_strides[static_cast<size_t>(permutation[i])];
    }
    CopyElement(operand, static_cast<size_t>(offset), out, static_cast<size_t>(linear));
  });
  return out;
}

StatusOr<Value> EvalSlice(const HloInstruction& instruction, const Value& operand) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Shape& shape = instruction.shape();
  const std::vector<SliceDimension>& slice = instruction.slice();
  if (static_cast<int64_t>(slice.size()) != operand.shape.rank() ||
      shape.rank() != operand.shape.rank()) {
    return InvalidArgument("%s: slice= has %zu dims for an operand of rank %lld",
                           instruction.NameForErrors().c_str(), slice.size(),
                           static_cast<long long>(operand.shape.rank()));
  }
  for (size_t d = 0; d < slice.size(); ++d) {
    const int64_t last =
        slice[d].start + (shape.dimensions(static_cast<int64_t>(d)) - 1) * slice[d].stride;
    if (slice[d].start < 0 || slice[d].stride < 1 ||
        (shape.dimensions(static_cast<int64_t>(d)) > 0 &&
         last >= operand.shape.dimensions(static_cast<int64_t>(d)))) {
      return InvalidArgument(
          "%s: slice dim %zu [%lld:%lld:%lld] is out of range for %s",
          instruction.NameForErrors().c_str(), d, static_cast<long long>(slice[d].start),
          static_cast<long long>(slice[d].limit), static_cast<long long>(slice[d].stride),
          operand.ShapeString().c_str());
    }
  }
  FP8_ASSIGN_OR_RETURN(Value out, ResultFor(instruction, operand));
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape.dimensions());
  ForEachIndex(shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      offset += (slice[d].start + index[d] * slice[d].stride) * in_strides[d];
    }
    CopyElement(operand, static_cast<size_t>(offset), out, static_cast<size_t>(linear));
  });
  return out;
}

StatusOr<Value> EvalDynamicSlice(const HloInstruction& instruction,
                                 const std::vector<const Value*>& operands) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, *operands[0], "operand"));
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Value& operand = *operands[0];
  const Shape& shape = instruction.shape();
  if (shape.rank() != operand.shape.rank()) {
    return InvalidArgument(
        "%s: result rank %lld differs from the operand's %lld", instruction.NameForErrors().c_str(),
        static_cast<long long>(shape.rank()), static_cast<long long>(operand.shape.rank()));
  }
  FP8_ASSIGN_OR_RETURN(
      std::vector<int64_t> starts,
      ClampedStarts(instruction, operands, 1, operand.shape.dimensions(), shape.dimensions()));
  FP8_ASSIGN_OR_RETURN(Value out, ResultFor(instruction, operand));
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape.dimensions());
  ForEachIndex(shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += (starts[d] + index[d]) * in_strides[d];
    CopyElement(operand, static_cast<size_t>(offset), out, static_cast<size_t>(linear));
  });
  return out;
}

StatusOr<Value> EvalDynamicUpdateSlice(const HloInstruction& instruction,
                                       const std::vector<const Value*>& operands) {
  if (operands.size() < 2) {
    return InvalidArgument("%s: needs an operand and an update",
                           instruction.NameForErrors().c_str());
  }
  const Value& operand = *operands[0];
  const Value& update = *operands[1];
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  FP8_RETURN_IF_ERROR(CheckArray(instruction, update, "update"));
  if (update.shape.rank() != operand.shape.rank()) {
    return InvalidArgument("%s: update %s and operand %s differ in rank",
                           instruction.NameForErrors().c_str(), update.ShapeString().c_str(),
                           operand.ShapeString().c_str());
  }
  FP8_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                       ClampedStarts(instruction, operands, 2, operand.shape.dimensions(),
                                     update.shape.dimensions()));
  FP8_RETURN_IF_ERROR(CheckElementType(instruction, operand));
  FP8_RETURN_IF_ERROR(CheckElementType(instruction, update));
  Value out = operand;
  out.shape = instruction.shape();
  const std::vector<int64_t> out_strides = RowMajorStrides(operand.shape.dimensions());
  ForEachIndex(update.shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += (starts[d] + index[d]) * out_strides[d];
    CopyElement(update, static_cast<size_t>(linear), out, static_cast<size_t>(offset));
  });
  return out;
}

StatusOr<Value> EvalConcatenate(const HloInstruction& instruction,
                                const std::vector<const Value*>& operands) {
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Shape& shape = instruction.shape();
  if (instruction.dimensions().size() != 1 || operands.empty()) {
    return InvalidArgument("%s: concatenate needs operands and one dimension",
                           instruction.NameForErrors().c_str());
  }
  const int64_t dim = instruction.dimensions(0);
  if (dim < 0 || dim >= shape.rank()) {
    return InvalidArgument("%s: dimension %lld is out of range for %s",
                           instruction.NameForErrors().c_str(), static_cast<long long>(dim),
                           shape.ToString().c_str());
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(shape.dimensions());
  Value out = Value::Zeros(shape);
  int64_t base = 0;
  for (const Value* operand : operands) {
    FP8_RETURN_IF_ERROR(CheckArray(instruction, *operand, "operand"));
    FP8_RETURN_IF_ERROR(CheckElementType(instruction, *operand));
    if (operand->shape.rank() != shape.rank() ||
        base + operand->shape.dimensions(dim) > shape.dimensions(dim)) {
      return InvalidArgument("%s: operand %s does not fit the result %s",
                             instruction.NameForErrors().c_str(), operand->ShapeString().c_str(),
                             shape.ToString().c_str());
    }
    ForEachIndex(
        operand->shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
          int64_t offset = 0;
          for (size_t d = 0; d < index.size(); ++d) {
            offset += (index[d] + (static_cast<int64_t>(d) == dim ? base : 0)) * out_strides[d];
          }
          CopyElement(*operand, static_cast<size_t>(linear), out, static_cast<size_t>(offset));
        });
    base += operand->shape.dimensions(dim);
  }
  return out;
}

StatusOr<Value> EvalPad(const HloInstruction& instruction, const Value& operand,
                        const Value& padding_value) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Shape& shape = instruction.shape();
  const std::vector<PaddingDimension>& padding = instruction.padding();
  if (padding_value.IsTuple() || padding_value.element_count() != 1 ||
      static_cast<int64_t>(padding.size()) != operand.shape.rank() ||
      shape.rank() != operand.shape.rank()) {
    return InvalidArgument(
        "%s: pad needs a scalar padding value and padding= for each of the "
        "operand's %lld dims",
        instruction.NameForErrors().c_str(), static_cast<long long>(operand.shape.rank()));
  }
  for (size_t d = 0; d < padding.size(); ++d) {
    const int64_t in = operand.shape.dimensions(static_cast<int64_t>(d));
    const std::optional<int64_t> expected = PaddedDimensionSize(in, padding[d]);
    if (expected != shape.dimensions(static_cast<int64_t>(d))) {
      return InvalidArgument("%s: padding of dim %zu gives size %s, but the result has %lld",
                             instruction.NameForErrors().c_str(), d,
                             expected ? std::to_string(*expected).c_str() : "(invalid)",
                             static_cast<long long>(shape.dimensions(static_cast<int64_t>(d))));
    }
  }
  FP8_ASSIGN_OR_RETURN(Value out, ResultFor(instruction, operand));
  FP8_RETURN_IF_ERROR(CheckElementType(instruction, padding_value));
  for (size_t i = 0; i < static_cast<size_t>(out.element_count()); ++i) {
    CopyElement(padding_value, 0, out, i);
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(shape.dimensions());
  ForEachIndex(operand.shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      // Negative low/high padding cuts elements off: skip those that land outside.
      // position = low + index * (interior + 1), which PaddedDimensionSize bounds by the
      // result's size except for index 0 of a size-1 dim with a huge interior: checked.
      int64_t position = 0;
      if (__builtin_mul_overflow(index[d], padding[d].interior, &position) ||
          __builtin_add_overflow(position, index[d], &position) ||
          __builtin_add_overflow(position, padding[d].low, &position) || position < 0 ||
          position >= shape.dimensions(static_cast<int64_t>(d))) {
        return;
      }
      offset += position * out_strides[d];
    }
    CopyElement(operand, static_cast<size_t>(linear), out, static_cast<size_t>(offset));
  });
  return out;
}

StatusOr<Value> EvalIota(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckResultShape(instruction));
  const Shape& shape = instruction.shape();
  const int64_t dim = instruction.iota_dimension();
  if (dim < 0 || dim >= shape.rank()) {
    return InvalidArgument("%s: iota_dimension=%lld is out of range for %s",
                           instruction.NameForErrors().c_str(), static_cast<long long>(dim),
                           shape.ToString().c_str());
  }
  const PrimitiveType type = shape.element_type();
  Value out = Value::Zeros(shape);
  ForEachIndex(shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
    const int64_t i = index[static_cast<size_t>(dim)];
    if (out.HoldsIntegers()) {
      out.integers[static_cast<size_t>(linear)] = WrapToIntegerType(static_cast<uint64_t>(i), type);
    } else {
      out.values[static_cast<size_t>(linear)] = RoundToElementType(static_cast<double>(i), type);
    }
  });
  return out;
}

StatusOr<Value> EvalReverse(const HloInstruction& instruction, const Value& operand) {
  FP8_RETURN_IF_ERROR(CheckArray(instruction, operand, "operand"));
  const std::vector<int64_t>& dims = operand.shape.dimensions();
  std::vector<bool> reversed(dims.size(), false);
  for (int64_t d : instruction.dimensions()) {
    if (d < 0 || d >= operand.shape.rank()) {
      return InvalidArgument("%s: dimension %lld is out of range",
                             instruction.NameForErrors().c_str(), static_cast<long long>(d));
    }
    reversed[static_cast<size_t>(d)] = true;
  }
  FP8_ASSIGN_OR_RETURN(Value out, ResultFor(instruction, operand));
  if (out.element_count() != operand.element_count()) {
    return InvalidArgument("%s: the result %s is not the operand's shape %s",
                           instruction.NameForErrors().c_str(),
                           instruction.shape().ToString().c_str(), operand.ShapeString().c_str());
  }
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  ForEachIndex(dims, [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      offset += (reversed[d] ? dims[d] - 1 - index[d] : index[d]) * strides[d];
    }
    CopyElement(operand, static_cast<size_t>(offset), out, static_cast<size_t>(linear));
  });
  return out;
}

}  // namespace fp8dot::hlo::internal
