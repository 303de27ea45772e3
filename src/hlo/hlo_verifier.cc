// The HLO verifier (include/fp8dot/hlo/hlo_verifier.h): module structure, then one shape rule per
// opcode. Each rule infers the result shape from the operands and attributes and compares it
// with the declared shape (element types and dims; layouts are not checked).
#include "fp8dot/hlo/hlo_verifier.h"

#include <algorithm>
#include <cstdarg>
#include <set>
#include <tuple>

namespace fp8dot::hlo {
namespace {

std::string Str(const Shape& shape) { return shape.ToString(); }

const Shape& OperandShape(const HloInstruction& instruction, int64_t i) {
  return instruction.operand(i)->shape();
}

std::string Ints(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(values[i]);
  }
  return out + "}";
}

// "%name (line N): message".
Status Fail(const HloInstruction& instruction, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
Status Fail(const HloInstruction& instruction, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::string message = StrFormatV(format, args);
  va_end(args);
  return Status(
      StatusCode::kInvalidArgument,
      instruction.NameForErrors() + " " + HloOpcodeString(instruction.opcode()) + ": " + message);
}

Status CheckOperandCount(const HloInstruction& instruction, int64_t expected) {
  if (instruction.operand_count() != expected) {
    return Fail(instruction, "expected %lld operands, got %lld", static_cast<long long>(expected),
                static_cast<long long>(instruction.operand_count()));
  }
  return OkStatus();
}

Status CheckArrayOperands(const HloInstruction& instruction) {
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (!instruction.operand(i)->shape().IsArray()) {
      return Fail(instruction, "operand %lld must be an array, got %s", static_cast<long long>(i),
                  Str(instruction.operand(i)->shape()).c_str());
    }
  }
  if (!instruction.shape().IsArray()) {
    return Fail(instruction, "result must be an array, got %s", Str(instruction.shape()).c_str());
  }
  return OkStatus();
}

// Declared shape == inferred shape (element type and dims).
Status CheckInferred(const HloInstruction& instruction, const Shape& inferred) {
  if (!Shape::Compatible(instruction.shape(), inferred)) {
    return Fail(instruction, "declared shape %s does not match the inferred shape %s",
                instruction.shape().ToString(false).c_str(), inferred.ToString(false).c_str());
  }
  return OkStatus();
}

Shape WithType(const Shape& shape, PrimitiveType type) {
  return Shape::MakeArray(type, shape.dimensions());
}

// Every value in `dims` is in [0, rank) and appears once.
Status CheckDimensionList(const HloInstruction& instruction, const char* what,
                          const std::vector<int64_t>& dims, int64_t rank) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Fail(instruction, "%s %s has dimension %lld out of range for rank %lld", what,
                  Ints(dims).c_str(), static_cast<long long>(d), static_cast<long long>(rank));
    }
    if (!seen.insert(d).second) {
      return Fail(instruction, "%s %s repeats dimension %lld", what, Ints(dims).c_str(),
                  static_cast<long long>(d));
    }
  }
  return OkStatus();
}

Status CheckScalarIndex(const HloInstruction& instruction, int64_t i) {
  const Shape& shape = instruction.operand(i)->shape();
  if (!shape.IsScalar() || !IsIntegralType(shape.element_type())) {
    return Fail(instruction, "operand %lld must be an integer scalar index, got %s",
                static_cast<long long>(i), Str(shape).c_str());
  }
  return OkStatus();
}

// Elementwise unary and binary ops: `operands` arrays of one shape, which is the result's.
Status VerifyElementwise(const HloInstruction& instruction, int64_t operands) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, operands));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& first = instruction.operand(0)->shape();
  for (int64_t i = 1; i < operands; ++i) {
    if (!Shape::Compatible(first, instruction.operand(i)->shape())) {
      return Fail(instruction, "operands have different shapes: %s vs %s", Str(first).c_str(),
                  Str(instruction.operand(i)->shape()).c_str());
    }
  }
  return CheckInferred(instruction, first);
}

// dot: valid batch and contracting dims of matching sizes, two operand precisions; the result
// is batch dims, then lhs free dims, then rhs free dims.
Status VerifyDot(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& lhs = instruction.operand(0)->shape();
  const Shape& rhs = instruction.operand(1)->shape();
  const DotDimensionNumbers& d = instruction.dot_dimension_numbers();
  FP8_RETURN_IF_ERROR(
      CheckDimensionList(instruction, "lhs_batch_dims", d.lhs_batch_dimensions, lhs.rank()));
  FP8_RETURN_IF_ERROR(
      CheckDimensionList(instruction, "rhs_batch_dims", d.rhs_batch_dimensions, rhs.rank()));
  FP8_RETURN_IF_ERROR(CheckDimensionList(instruction, "lhs_contracting_dims",
                                         d.lhs_contracting_dimensions, lhs.rank()));
  FP8_RETURN_IF_ERROR(CheckDimensionList(instruction, "rhs_contracting_dims",
                                         d.rhs_contracting_dimensions, rhs.rank()));
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) {
    return Fail(instruction, "lhs_batch_dims %s and rhs_batch_dims %s differ in length",
                Ints(d.lhs_batch_dimensions).c_str(), Ints(d.rhs_batch_dimensions).c_str());
  }
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return Fail(instruction, "lhs_contracting_dims %s and rhs_contracting_dims %s differ in length",
                Ints(d.lhs_contracting_dimensions).c_str(),
                Ints(d.rhs_contracting_dimensions).c_str());
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    const int64_t l = lhs.dimensions(d.lhs_batch_dimensions[i]);
    const int64_t r = rhs.dimensions(d.rhs_batch_dimensions[i]);
    if (l != r) {
      return Fail(instruction, "batch dimension %zu has size %lld in lhs %s but %lld in rhs %s", i,
                  static_cast<long long>(l), Str(lhs).c_str(), static_cast<long long>(r),
                  Str(rhs).c_str());
    }
    dims.push_back(l);
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    const int64_t l = lhs.dimensions(d.lhs_contracting_dimensions[i]);
    const int64_t r = rhs.dimensions(d.rhs_contracting_dimensions[i]);
    if (l != r) {
      return Fail(
          instruction, "contracting dimension %zu has size %lld in lhs %s but %lld in rhs %s", i,
          static_cast<long long>(l), Str(lhs).c_str(), static_cast<long long>(r), Str(rhs).c_str());
    }
  }
  for (const auto& [shape, batch, contracting] :
       {std::tuple{&lhs, &d.lhs_batch_dimensions, &d.lhs_contracting_dimensions},
        std::tuple{&rhs, &d.rhs_batch_dimensions, &d.rhs_contracting_dimensions}}) {
    for (int64_t i = 0; i < shape->rank(); ++i) {
      if (std::count(batch->begin(), batch->end(), i) ||
          std::count(contracting->begin(), contracting->end(), i)) {
        continue;
      }
      dims.push_back(shape->dimensions(i));
    }
  }
  const std::vector<Precision>& precision = instruction.precision_config().operand_precision;
  if (precision.size() != 2) {
    return Fail(instruction, "operand_precision must have 2 entries, got %zu", precision.size());
  }
  return CheckInferred(instruction,
                       Shape::MakeArray(instruction.shape().element_type(), std::move(dims)));
}

// reduce(inputs..., inits...): N arrays of one dims, N scalar inits, a 2N-parameter to_apply;
// each result drops the reduced dims and takes its init's type.
Status VerifyReduce(const HloInstruction& instruction) {
  const int64_t n = instruction.operand_count() / 2;
  if (n == 0 || instruction.operand_count() % 2 != 0) {
    return Fail(instruction, "expected N inputs and N init values, got %lld operands",
                static_cast<long long>(instruction.operand_count()));
  }
  const HloComputation* to_apply = instruction.to_apply();
  if (to_apply == nullptr) return Fail(instruction, "missing to_apply");
  if (to_apply->num_parameters() != 2 * n) {
    return Fail(instruction, "to_apply %%%s has %lld parameters, expected %lld",
                to_apply->name().c_str(), static_cast<long long>(to_apply->num_parameters()),
                static_cast<long long>(2 * n));
  }
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = instruction.operand(i)->shape();
    const Shape& init = instruction.operand(n + i)->shape();
    if (!input.IsArray() || !init.IsScalar()) {
      return Fail(instruction,
                  "input %lld must be an array and its init value a scalar, got %s "
                  "and %s",
                  static_cast<long long>(i), Str(input).c_str(), Str(init).c_str());
    }
    if (i > 0 && !Shape::SameDimensions(input, instruction.operand(0)->shape())) {
      return Fail(instruction, "inputs have different dimensions");
    }
    FP8_RETURN_IF_ERROR(
        CheckDimensionList(instruction, "dimensions", instruction.dimensions(), input.rank()));
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < input.rank(); ++d) {
      const auto& reduced = instruction.dimensions();
      if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) {
        dims.push_back(input.dimensions(d));
      }
    }
    results.push_back(Shape::MakeArray(init.element_type(), std::move(dims)));
  }
  // to_apply returns what the inits are: one scalar, or a tuple of N.
  std::vector<Shape> inits;
  for (int64_t i = 0; i < n; ++i) inits.push_back(instruction.operand(n + i)->shape());
  const Shape expected = n == 1 ? inits[0] : Shape::MakeTuple(std::move(inits));
  const HloInstruction* root = to_apply->root_instruction();
  if (root != nullptr && !Shape::Compatible(root->shape(), expected)) {
    return Fail(instruction, "to_apply %%%s returns %s but the init values are %s",
                to_apply->name().c_str(), Str(root->shape()).c_str(), Str(expected).c_str());
  }
  return CheckInferred(instruction, n == 1 ? results[0] : Shape::MakeTuple(std::move(results)));
}

// scatter(operand, indices, updates): integer indices, dimension numbers that fit the three
// shapes, updates of the operand's type; the result is the operand's shape.
Status VerifyScatter(const HloInstruction& instruction) {
  if (instruction.operand_count() != 3) {
    return Fail(instruction,
                "only single-operand scatter (operand, indices, updates) is "
                "supported, got %lld operands",
                static_cast<long long>(instruction.operand_count()));
  }
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& indices = instruction.operand(1)->shape();
  const Shape& updates = instruction.operand(2)->shape();
  const ScatterDimensionNumbers& s = instruction.scatter_dimension_numbers();
  if (!IsIntegralType(indices.element_type())) {
    return Fail(instruction, "indices must be integers, got %s", Str(indices).c_str());
  }
  if (instruction.to_apply() == nullptr) return Fail(instruction, "missing to_apply");
  if (s.index_vector_dim < 0 || s.index_vector_dim > indices.rank()) {
    return Fail(instruction, "index_vector_dim %lld out of range for indices %s",
                static_cast<long long>(s.index_vector_dim), Str(indices).c_str());
  }
  const int64_t index_vector_size =
      s.index_vector_dim == indices.rank() ? 1 : indices.dimensions(s.index_vector_dim);
  if (static_cast<int64_t>(s.scatter_dims_to_operand_dims.size()) != index_vector_size) {
    return Fail(instruction,
                "scatter_dims_to_operand_dims %s must have %lld entries (the index "
                "vector size)",
                Ints(s.scatter_dims_to_operand_dims).c_str(),
                static_cast<long long>(index_vector_size));
  }
  FP8_RETURN_IF_ERROR(CheckDimensionList(instruction, "scatter_dims_to_operand_dims",
                                         s.scatter_dims_to_operand_dims, operand.rank()));
  FP8_RETURN_IF_ERROR(CheckDimensionList(instruction, "inserted_window_dims",
                                         s.inserted_window_dims, operand.rank()));
  FP8_RETURN_IF_ERROR(
      CheckDimensionList(instruction, "update_window_dims", s.update_window_dims, updates.rank()));
  const int64_t scatter_rank = indices.rank() - (s.index_vector_dim < indices.rank() ? 1 : 0);
  const int64_t expected_rank = static_cast<int64_t>(s.update_window_dims.size()) + scatter_rank;
  if (updates.rank() != expected_rank) {
    return Fail(instruction, "updates %s must have rank %lld (update_window_dims + scatter dims)",
                Str(updates).c_str(), static_cast<long long>(expected_rank));
  }
  if (static_cast<int64_t>(s.update_window_dims.size() + s.inserted_window_dims.size() +
                           s.input_batching_dims.size()) != operand.rank()) {
    return Fail(instruction,
                "update_window_dims %s and inserted_window_dims %s must cover the "
                "operand's rank %lld",
                Ints(s.update_window_dims).c_str(), Ints(s.inserted_window_dims).c_str(),
                static_cast<long long>(operand.rank()));
  }
  // Updates' scatter dims (those not in update_window_dims) are the indices' dims other than
  // index_vector_dim, in order; each window dim fits the operand dim it spans.
  for (int64_t u = 0, g = 0; u < updates.rank(); ++u) {
    if (std::count(s.update_window_dims.begin(), s.update_window_dims.end(), u)) continue;
    if (g == s.index_vector_dim) ++g;
    if (updates.dimensions(u) != indices.dimensions(g)) {
      return Fail(instruction,
                  "updates %s dimension %lld (size %lld) does not match indices %s dimension %lld",
                  Str(updates).c_str(), static_cast<long long>(u),
                  static_cast<long long>(updates.dimensions(u)), Str(indices).c_str(),
                  static_cast<long long>(g));
    }
    ++g;
  }
  for (int64_t d = 0, k = 0; d < operand.rank(); ++d) {
    if (std::count(s.inserted_window_dims.begin(), s.inserted_window_dims.end(), d) ||
        std::count(s.input_batching_dims.begin(), s.input_batching_dims.end(), d)) {
      continue;
    }
    if (k >= static_cast<int64_t>(s.update_window_dims.size())) break;  // batching dims overlap
    const int64_t u = s.update_window_dims[static_cast<size_t>(k++)];
    if (updates.dimensions(u) > operand.dimensions(d)) {
      return Fail(instruction, "updates %s window dimension %lld (size %lld) exceeds operand %s",
                  Str(updates).c_str(), static_cast<long long>(u),
                  static_cast<long long>(updates.dimensions(u)), Str(operand).c_str());
    }
  }
  if (updates.element_type() != operand.element_type()) {
    return Fail(instruction, "updates %s and operand %s have different element types",
                Str(updates).c_str(), Str(operand).c_str());
  }
  return CheckInferred(instruction, operand);
}

// parameter: takes no operands (its shape is whatever it declares).
Status VerifyParameter(const HloInstruction& instruction) {
  return CheckOperandCount(instruction, 0);
}

// constant: no operands; the literal has the declared shape and one value per element.
Status VerifyConstant(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 0));
  const Literal& literal = instruction.literal();
  FP8_RETURN_IF_ERROR(CheckInferred(instruction, literal.shape));
  if (literal.element_count() != literal.shape.ElementCount()) {
    return Fail(instruction, "literal has %lld values for shape %s",
                static_cast<long long>(literal.element_count()), Str(literal.shape).c_str());
  }
  return OkStatus();
}

// convert, bitcast-convert, stochastic-convert (operand, random bits): the operand's dims with
// the declared element type.
Status VerifyConvert(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  FP8_RETURN_IF_ERROR(
      CheckOperandCount(instruction, opcode == HloOpcode::kStochasticConvert ? 2 : 1));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  if (opcode == HloOpcode::kBitcastConvert &&
      PrimitiveTypeByteSize(OperandShape(instruction, 0).element_type()) !=
          PrimitiveTypeByteSize(instruction.shape().element_type())) {
    return OkStatus();  // size-changing bitcast-convert adds/removes a minor dimension
  }
  return CheckInferred(instruction,
                       WithType(OperandShape(instruction, 0), instruction.shape().element_type()));
}

// is-finite: pred with the operand's dims.
Status VerifyIsFinite(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  return CheckInferred(instruction, WithType(OperandShape(instruction, 0), PrimitiveType::kPred));
}

// compare: a direction, two operands of one shape, pred with their dims.
Status VerifyCompare(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  if (!instruction.comparison_direction().has_value()) {
    return Fail(instruction, "missing direction=");
  }
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  if (!Shape::Compatible(lhs, rhs)) {
    return Fail(instruction, "operands have different shapes: %s vs %s", Str(lhs).c_str(),
                Str(rhs).c_str());
  }
  return CheckInferred(instruction, WithType(lhs, PrimitiveType::kPred));
}

// select(pred, on_true, on_false): branches of one shape, a pred scalar or of their dims; the
// result is the branches' shape.
Status VerifySelect(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 3));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& pred = OperandShape(instruction, 0);
  const Shape& on_true = OperandShape(instruction, 1);
  const Shape& on_false = OperandShape(instruction, 2);
  if (pred.element_type() != PrimitiveType::kPred) {
    return Fail(instruction, "predicate must be pred, got %s", Str(pred).c_str());
  }
  if (!Shape::Compatible(on_true, on_false)) {
    return Fail(instruction, "on_true %s and on_false %s differ", Str(on_true).c_str(),
                Str(on_false).c_str());
  }
  if (!pred.IsScalar() && !Shape::SameDimensions(pred, on_true)) {
    return Fail(instruction, "predicate %s must be a scalar or have the dims of %s",
                Str(pred).c_str(), Str(on_true).c_str());
  }
  return CheckInferred(instruction, on_true);
}

// clamp(low, x, high): each bound of x's element type, a scalar or of x's dims; the result is x.
Status VerifyClamp(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 3));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& x = OperandShape(instruction, 1);
  for (int64_t i : {0, 2}) {
    const Shape& bound = OperandShape(instruction, i);
    if (bound.element_type() != x.element_type() ||
        (!bound.IsScalar() && !Shape::SameDimensions(bound, x))) {
      return Fail(instruction, "bound %s must be a scalar or the shape of the operand %s",
                  Str(bound).c_str(), Str(x).c_str());
    }
  }
  return CheckInferred(instruction, x);
}

// broadcast: dimensions= maps each operand dim, without repeats, to a result dim of the same
// size; the element type stays.
Status VerifyBroadcast(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& in = OperandShape(instruction, 0);
  const Shape& out = instruction.shape();
  const std::vector<int64_t>& dims = instruction.dimensions();
  if (static_cast<int64_t>(dims.size()) != in.rank()) {
    return Fail(instruction, "dimensions=%s must have one entry per operand dimension (%lld)",
                Ints(dims).c_str(), static_cast<long long>(in.rank()));
  }
  FP8_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", dims, out.rank()));
  for (int64_t i = 0; i < in.rank(); ++i) {
    const int64_t target = dims[static_cast<size_t>(i)];
    if (in.dimensions(i) != out.dimensions(target)) {
      return Fail(instruction,
                  "operand dimension %lld (size %lld) maps to result dimension "
                  "%lld of size %lld",
                  static_cast<long long>(i), static_cast<long long>(in.dimensions(i)),
                  static_cast<long long>(target), static_cast<long long>(out.dimensions(target)));
    }
  }
  if (in.element_type() != out.element_type()) {
    return Fail(instruction, "element type changes from %s to %s", Str(in).c_str(),
                Str(out).c_str());
  }
  return OkStatus();
}

// reshape: same element type and count; bitcast: same size in bytes (the type may change).
Status VerifyReshape(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& in = OperandShape(instruction, 0);
  const Shape& out = instruction.shape();
  const bool same_type = in.element_type() == out.element_type();
  if (instruction.opcode() == HloOpcode::kReshape && !same_type) {
    return Fail(instruction, "element type changes from %s to %s", Str(in).c_str(),
                Str(out).c_str());
  }
  // Both counts fit in int64 (VerifyHloInstruction checks every shape first); the byte sizes may
  // not: CheckedByteSize.
  if (same_type ? in.ElementCount() != out.ElementCount()
                : in.CheckedByteSize() != out.CheckedByteSize() || !in.CheckedByteSize()) {
    return Fail(instruction, "%s and %s have different sizes", Str(in).c_str(), Str(out).c_str());
  }
  return OkStatus();
}

// transpose: dimensions= is a permutation of the operand's dims; the result takes their sizes
// in that order.
Status VerifyTranspose(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& in = OperandShape(instruction, 0);
  const std::vector<int64_t>& perm = instruction.dimensions();
  if (static_cast<int64_t>(perm.size()) != in.rank()) {
    return Fail(instruction, "dimensions=%s is not a permutation of the operand's %lld dims",
                Ints(perm).c_str(), static_cast<long long>(in.rank()));
  }
  FP8_RETURN_IF_ERROR(CheckDimensionList(instruction, "dimensions", perm, in.rank()));
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(in.dimensions(p));
  return CheckInferred(instruction, Shape::MakeArray(in.element_type(), std::move(dims)));
}

// slice: one [start:limit:stride] per operand dim, inside it; the result has ceil((limit -
// start) / stride) elements along each.
Status VerifySlice(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& in = OperandShape(instruction, 0);
  const std::vector<SliceDimension>& slice = instruction.slice();
  if (static_cast<int64_t>(slice.size()) != in.rank()) {
    return Fail(instruction, "slice has %zu dimensions, operand %s has %lld", slice.size(),
                Str(in).c_str(), static_cast<long long>(in.rank()));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < in.rank(); ++i) {
    const SliceDimension& s = slice[static_cast<size_t>(i)];
    if (s.start < 0 || s.start > s.limit || s.limit > in.dimensions(i) || s.stride < 1) {
      return Fail(instruction,
                  "slice [%lld:%lld:%lld] is invalid for dimension %lld of size "
                  "%lld",
                  static_cast<long long>(s.start), static_cast<long long>(s.limit),
                  static_cast<long long>(s.stride), static_cast<long long>(i),
                  static_cast<long long>(in.dimensions(i)));
    }
    // ceil((limit - start) / stride), without the overflow of limit - start + stride - 1.
    const int64_t extent = s.limit - s.start;  // in [0, dim]: checked above
    dims.push_back(extent / s.stride + (extent % s.stride != 0 ? 1 : 0));
  }
  return CheckInferred(instruction, Shape::MakeArray(in.element_type(), std::move(dims)));
}

// dynamic-slice(operand, start indices...): one scalar integer index per operand dim, and
// dynamic_slice_sizes= no larger than the operand; the result has those sizes.
Status VerifyDynamicSlice(const HloInstruction& instruction) {
  if (instruction.operand_count() < 1) return CheckOperandCount(instruction, 1);
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& in = OperandShape(instruction, 0);
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1 + in.rank()));
  for (int64_t i = 1; i <= in.rank(); ++i) FP8_RETURN_IF_ERROR(CheckScalarIndex(instruction, i));
  const std::vector<int64_t>& sizes = instruction.dynamic_slice_sizes();
  if (static_cast<int64_t>(sizes.size()) != in.rank()) {
    return Fail(instruction, "dynamic_slice_sizes=%s must have %lld entries", Ints(sizes).c_str(),
                static_cast<long long>(in.rank()));
  }
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (sizes[static_cast<size_t>(i)] < 0 || sizes[static_cast<size_t>(i)] > in.dimensions(i)) {
      return Fail(instruction, "dynamic_slice_sizes=%s exceeds the operand %s", Ints(sizes).c_str(),
                  Str(in).c_str());
    }
  }
  return CheckInferred(instruction, Shape::MakeArray(in.element_type(), sizes));
}

// dynamic-update-slice(operand, update, start indices...): one scalar integer index per operand
// dim, an update of the operand's rank and type that fits inside it; the result is the operand.
Status VerifyDynamicUpdateSlice(const HloInstruction& instruction) {
  if (instruction.operand_count() < 2) return CheckOperandCount(instruction, 2);
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& in = OperandShape(instruction, 0);
  const Shape& update = OperandShape(instruction, 1);
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 2 + in.rank()));
  for (int64_t i = 2; i < 2 + in.rank(); ++i) {
    FP8_RETURN_IF_ERROR(CheckScalarIndex(instruction, i));
  }
  if (update.rank() != in.rank() || update.element_type() != in.element_type()) {
    return Fail(instruction, "update %s does not match operand %s", Str(update).c_str(),
                Str(in).c_str());
  }
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (update.dimensions(i) > in.dimensions(i)) {
      return Fail(instruction, "update %s is larger than operand %s", Str(update).c_str(),
                  Str(in).c_str());
    }
  }
  return CheckInferred(instruction, in);
}

// concatenate: one dimension= in range; operands agree with operand 0 in type, rank and every
// other dim; the result sums their sizes along it.
Status VerifyConcatenate(const HloInstruction& instruction) {
  if (instruction.operand_count() < 1) return CheckOperandCount(instruction, 1);
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  if (instruction.dimensions().size() != 1) {
    return Fail(instruction, "dimensions=%s must name exactly one dimension",
                Ints(instruction.dimensions()).c_str());
  }
  const int64_t axis = instruction.dimensions(0);
  const Shape& first = OperandShape(instruction, 0);
  if (axis < 0 || axis >= first.rank()) {
    return Fail(instruction, "dimension %lld out of range for %s", static_cast<long long>(axis),
                Str(first).c_str());
  }
  std::vector<int64_t> dims = first.dimensions();
  for (int64_t i = 1; i < instruction.operand_count(); ++i) {
    const Shape& other = OperandShape(instruction, i);
    bool ok = other.rank() == first.rank() && other.element_type() == first.element_type();
    for (int64_t d = 0; ok && d < first.rank(); ++d) {
      if (d != axis && other.dimensions(d) != first.dimensions(d)) ok = false;
    }
    if (!ok) {
      return Fail(instruction,
                  "operand %lld %s does not match operand 0 %s outside "
                  "dimension %lld",
                  static_cast<long long>(i), Str(other).c_str(), Str(first).c_str(),
                  static_cast<long long>(axis));
    }
    int64_t& size = dims[static_cast<size_t>(axis)];
    if (__builtin_add_overflow(size, other.dimensions(axis), &size)) {
      return Fail(instruction, "the sizes along dimension %lld overflow int64 at operand %lld %s",
                  static_cast<long long>(axis), static_cast<long long>(i), Str(other).c_str());
    }
  }
  return CheckInferred(instruction, Shape::MakeArray(first.element_type(), std::move(dims)));
}

// pad(operand, padding value): a scalar padding value of the operand's type, one low_high_interior
// per dim (interior >= 0, no negative size); the result has the padded sizes.
Status VerifyPad(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 2));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& in = OperandShape(instruction, 0);
  const Shape& padding_value = OperandShape(instruction, 1);
  if (!padding_value.IsScalar() || padding_value.element_type() != in.element_type()) {
    return Fail(instruction, "padding value must be a %s scalar, got %s",
                PrimitiveTypeName(in.element_type()), Str(padding_value).c_str());
  }
  const std::vector<PaddingDimension>& padding = instruction.padding();
  if (static_cast<int64_t>(padding.size()) != in.rank()) {
    return Fail(instruction, "padding has %zu dimensions, operand %s has %lld", padding.size(),
                Str(in).c_str(), static_cast<long long>(in.rank()));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < in.rank(); ++i) {
    const PaddingDimension& p = padding[static_cast<size_t>(i)];
    const std::optional<int64_t> size = PaddedDimensionSize(in.dimensions(i), p);
    if (!size.has_value()) {
      return Fail(instruction,
                  "padding %lld_%lld_%lld is invalid for dimension %lld of size %lld (negative "
                  "interior or size, or a size beyond int64)",
                  static_cast<long long>(p.low), static_cast<long long>(p.high),
                  static_cast<long long>(p.interior), static_cast<long long>(i),
                  static_cast<long long>(in.dimensions(i)));
    }
    dims.push_back(*size);
  }
  return CheckInferred(instruction, Shape::MakeArray(in.element_type(), std::move(dims)));
}

// iota: no operands, an array result with iota_dimension= one of its dims.
Status VerifyIota(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 0));
  FP8_RETURN_IF_ERROR(CheckArrayOperands(instruction));
  const Shape& shape = instruction.shape();
  if (shape.rank() == 0 || instruction.iota_dimension() < 0 ||
      instruction.iota_dimension() >= shape.rank()) {
    return Fail(instruction, "iota_dimension=%lld out of range for %s",
                static_cast<long long>(instruction.iota_dimension()), Str(shape).c_str());
  }
  return OkStatus();
}

// call: to_apply= takes the operands as its parameters; the result is what it returns.
Status VerifyCall(const HloInstruction& instruction) {
  const HloComputation* callee = instruction.to_apply();
  if (callee == nullptr) return Fail(instruction, "missing to_apply");
  if (callee->num_parameters() != instruction.operand_count()) {
    return Fail(instruction, "%%%s takes %lld parameters, got %lld operands",
                callee->name().c_str(), static_cast<long long>(callee->num_parameters()),
                static_cast<long long>(instruction.operand_count()));
  }
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& param = callee->parameter_instruction(i)->shape();
    const Shape& operand = OperandShape(instruction, i);
    if (!Shape::Compatible(param, operand)) {
      return Fail(instruction, "operand %lld %s does not match parameter %lld %s of %%%s",
                  static_cast<long long>(i), Str(operand).c_str(), static_cast<long long>(i),
                  Str(param).c_str(), callee->name().c_str());
    }
  }
  return CheckInferred(instruction, callee->root_instruction()->shape());
}

// tuple: the tuple of its operands' shapes.
Status VerifyTuple(const HloInstruction& instruction) {
  std::vector<Shape> elements;
  for (const HloInstruction* operand : instruction.operands()) {
    elements.push_back(operand->shape());
  }
  return CheckInferred(instruction, Shape::MakeTuple(std::move(elements)));
}

// get-tuple-element: a tuple operand and index= in range; the result is that element's shape.
Status VerifyGetTupleElement(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const Shape& tuple = OperandShape(instruction, 0);
  if (!tuple.IsTuple()) {
    return Fail(instruction, "operand must be a tuple, got %s", Str(tuple).c_str());
  }
  const int64_t index = instruction.tuple_index();
  if (index < 0 || index >= tuple.tuple_shapes_size()) {
    return Fail(instruction, "index=%lld out of range for %s", static_cast<long long>(index),
                Str(tuple).c_str());
  }
  return CheckInferred(instruction, tuple.tuple_shapes(index));
}

// fusion-start, the asynchronous fusion of XLA's optimized dumps: ((operands...), the fused
// computation's result, context), the context a scalar; fusion-done takes the start and gives
// the result.
Status VerifyFusionStart(const HloInstruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 3 || !shape.tuple_shapes(2).IsScalar()) {
    return Fail(instruction, "shape must be ((operands...), result, context scalar), got %s",
                Str(shape).c_str());
  }
  std::vector<Shape> operands;
  for (const HloInstruction* operand : instruction.operands()) operands.push_back(operand->shape());
  const Shape expected = Shape::MakeTuple(std::move(operands));
  if (!Shape::Compatible(shape.tuple_shapes(0), expected)) {
    return Fail(instruction, "element 0 %s must be the operands' shapes %s",
                Str(shape.tuple_shapes(0)).c_str(), Str(expected).c_str());
  }
  for (const CalledComputation& called : instruction.called_computations()) {
    if (called.attribute != "calls" || called.computation == nullptr) continue;
    const Shape& root = called.computation->root_instruction()->shape();
    if (!Shape::Compatible(shape.tuple_shapes(1), root)) {
      return Fail(instruction, "element 1 %s must be the result of %%%s, %s",
                  Str(shape.tuple_shapes(1)).c_str(), called.computation->name().c_str(),
                  Str(root).c_str());
    }
  }
  return OkStatus();
}

Status VerifyFusionDone(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const HloInstruction& start = *instruction.operand(0);
  if (start.opcode() != HloOpcode::kFusionStart || !start.shape().IsTuple() ||
      start.shape().tuple_shapes_size() < 2) {
    return Fail(instruction, "operand must be a fusion-start, got %s %%%s",
                HloOpcodeString(start.opcode()), start.name().c_str());
  }
  return CheckInferred(instruction, start.shape().tuple_shapes(1));
}

// The shape rule of the instruction's opcode; custom-call and ops without a rule pass.
Status VerifyShapeRule(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode)) return VerifyElementwise(instruction, 1);
  if (IsElementwiseBinary(opcode)) return VerifyElementwise(instruction, 2);
  switch (opcode) {
    case HloOpcode::kParameter:
      return VerifyParameter(instruction);
    case HloOpcode::kConstant:
      return VerifyConstant(instruction);
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kStochasticConvert:
      return VerifyConvert(instruction);
    case HloOpcode::kIsFinite:
      return VerifyIsFinite(instruction);
    case HloOpcode::kCompare:
      return VerifyCompare(instruction);
    case HloOpcode::kSelect:
      return VerifySelect(instruction);
    case HloOpcode::kClamp:
      return VerifyClamp(instruction);
    case HloOpcode::kBroadcast:
      return VerifyBroadcast(instruction);
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return VerifyReshape(instruction);
    case HloOpcode::kTranspose:
      return VerifyTranspose(instruction);
    case HloOpcode::kSlice:
      return VerifySlice(instruction);
    case HloOpcode::kDynamicSlice:
      return VerifyDynamicSlice(instruction);
    case HloOpcode::kDynamicUpdateSlice:
      return VerifyDynamicUpdateSlice(instruction);
    case HloOpcode::kConcatenate:
      return VerifyConcatenate(instruction);
    case HloOpcode::kPad:
      return VerifyPad(instruction);
    case HloOpcode::kIota:
      return VerifyIota(instruction);
    case HloOpcode::kReduce:
      return VerifyReduce(instruction);
    case HloOpcode::kDot:
      return VerifyDot(instruction);
    case HloOpcode::kCall:
      return VerifyCall(instruction);
    case HloOpcode::kTuple:
      return VerifyTuple(instruction);
    case HloOpcode::kGetTupleElement:
      return VerifyGetTupleElement(instruction);
    case HloOpcode::kScatter:
      return VerifyScatter(instruction);
    case HloOpcode::kFusionStart:
      return VerifyFusionStart(instruction);
    case HloOpcode::kFusionDone:
      return VerifyFusionDone(instruction);
    default:
      return OkStatus();  // custom-call and ops without a shape rule here
  }
}

// Every array in `shape` has an element count that fits in int64.
Status CheckElementCountFits(const HloInstruction& instruction, const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      FP8_RETURN_IF_ERROR(CheckElementCountFits(instruction, element));
    }
    return OkStatus();
  }
  if (shape.IsArray() && !shape.CheckedElementCount().has_value()) {
    return Fail(instruction, "shape %s has more elements than fit in int64", Str(shape).c_str());
  }
  return OkStatus();
}

}  // namespace

Status VerifyHloInstruction(const HloInstruction& instruction) {
  FP8_RETURN_IF_ERROR(CheckElementCountFits(instruction, instruction.shape()));
  for (const HloInstruction* operand : instruction.operands()) {
    if (operand->parent() != instruction.parent()) {
      return Fail(instruction, "operand %%%s is in another computation", operand->name().c_str());
    }
  }
  for (const CalledComputation& called : instruction.called_computations()) {
    if (called.computation == nullptr) {
      return Fail(instruction, "%s names no computation", called.attribute.c_str());
    }
  }
  return VerifyShapeRule(instruction);
}

Status VerifyHloComputation(const HloComputation& computation) {
  if (computation.root_instruction() == nullptr) {
    return InvalidArgument("computation %%%s has no root", computation.name().c_str());
  }
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    if (computation.parameter_instruction(i) == nullptr) {
      return InvalidArgument("computation %%%s has no parameter(%lld)", computation.name().c_str(),
                             static_cast<long long>(i));
    }
  }
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    FP8_RETURN_IF_ERROR(VerifyHloInstruction(*instruction));
  }
  return OkStatus();
}

Status VerifyHloModule(const HloModule& module) {
  if (module.entry_computation() == nullptr) {
    return InvalidArgument("module %s has no entry computation", module.name().c_str());
  }
  for (const HloComputation* computation : module.computations()) {
    FP8_RETURN_IF_ERROR(VerifyHloComputation(*computation));
  }
  return OkStatus();
}

}  // namespace fp8dot::hlo
