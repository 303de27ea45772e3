// HloInterpreter: evaluates computations instruction by instruction in post order, freeing each
// value after its last use. Ops that call computations (reduce, scatter, call) live here; the
// elementwise and data-movement ops in interpreter_elementwise.cc / interpreter_shape_ops.cc,
// the dots in interpreter_dot.cc.
#include "fp8dot/hlo/interpreter.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "fp8dot/hlo/gemm_backend_config.h"
#include "fp8dot/hlo/hlo_verifier.h"
#include "hlo/interpreter_ops.h"

namespace fp8dot::hlo {
namespace {

constexpr int kMaxCallDepth = 64;

// A to_apply computation of the form ROOT op(parameter(0), parameter(1)) (or swapped), or
// ROOT parameter(i): evaluated without calling the interpreter per element.
struct SimpleCombiner {
  enum class Kind { kNone, kBinary, kTakeOld, kTakeNew } kind = Kind::kNone;
  HloOpcode opcode = HloOpcode::kAdd;
  bool swapped = false;  // op(parameter(1), parameter(0))

  // acc[o] = f(acc[o], in[i]) for an accumulator of `type` (AnalyzeCombiner's conditions).
  void Apply(PrimitiveType type, Value& acc, size_t o, const Value& in, size_t i) const {
    if (kind == Kind::kTakeNew) return CopyElement(in, i, acc, o);
    if (kind != Kind::kBinary) return;  // kTakeOld
    internal::VisitElements(
        [&](auto& old_values, const auto& new_values) {
          old_values[o] = swapped
                              ? internal::ApplyBinary(opcode, type, new_values[i], old_values[o])
                              : internal::ApplyBinary(opcode, type, old_values[o], new_values[i]);
        },
        acc, in);
  }
};

// The fast path for folding elements of `input_type` into an accumulator of `type` with
// `computation`, when it is that simple; Kind::kNone otherwise. The elements must be held alike
// (both floats, or both pred/integers): a binary op then combines them as held and rounds or
// wraps to `type` (a bf16 input into an f32 sum, s8 into s32). Taking the new element as it is
// needs the same type.
SimpleCombiner AnalyzeCombiner(const HloComputation& computation, PrimitiveType type,
                               PrimitiveType input_type) {
  SimpleCombiner combiner;
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr || computation.num_parameters() != 2 || !root->shape().IsScalar() ||
      root->shape().element_type() != type ||
      IsPredOrIntegralType(input_type) != IsPredOrIntegralType(type)) {
    return combiner;
  }
  const HloInstruction* p0 = computation.parameter_instruction(0);
  const HloInstruction* p1 = computation.parameter_instruction(1);
  if (root == p0) {
    combiner.kind = SimpleCombiner::Kind::kTakeOld;
  } else if (root == p1) {
    if (input_type == type) combiner.kind = SimpleCombiner::Kind::kTakeNew;
  } else if (IsElementwiseBinary(root->opcode()) && root->opcode() != HloOpcode::kCompare &&
             internal::BinaryIsDefined(root->opcode(), type) && root->operand_count() == 2) {
    if (root->operand(0) == p0 && root->operand(1) == p1) {
      combiner.kind = SimpleCombiner::Kind::kBinary;
    } else if (root->operand(0) == p1 && root->operand(1) == p0) {
      combiner.kind = SimpleCombiner::Kind::kBinary;
      combiner.swapped = true;
    }
    combiner.opcode = root->opcode();
  }
  return combiner;
}

// The value with `shape`'s layouts (arguments are matched ignoring layouts).
Value WithShape(Value value, const Shape& shape) {
  if (shape.IsTuple() && value.IsTuple() &&
      static_cast<int64_t>(value.elements.size()) == shape.tuple_shapes_size()) {
    for (size_t i = 0; i < value.elements.size(); ++i) {
      value.elements[i] =
          WithShape(std::move(value.elements[i]), shape.tuple_shapes(static_cast<int64_t>(i)));
    }
  }
  value.shape = shape;
  return value;
}

bool IsGemmTarget(const std::string& target) {
  return target == kCublasLtMatmulF8Target || target == kCublasLtMatmulTarget;
}

}  // namespace

StatusOr<Value> HloInterpreter::Evaluate(const HloModule& module,
                                         const std::vector<Value>& arguments) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr)
    return InvalidArgument("module %s has no entry computation", module.name().c_str());
  // The eval functions index operands by the shapes and attributes the verifier checks (scatter
  // dimension numbers, transpose permutations, ...): never run a module that fails it.
  FP8_RETURN_IF_ERROR(VerifyHloModule(module));
  if (static_cast<int64_t>(arguments.size()) != entry->num_parameters()) {
    return InvalidArgument("%s takes %lld parameters, got %zu arguments", entry->name().c_str(),
                           static_cast<long long>(entry->num_parameters()), arguments.size());
  }
  std::vector<Value> parameters;
  parameters.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    const HloInstruction* parameter = entry->parameter_instruction(static_cast<int64_t>(i));
    if (parameter == nullptr) {
      return InvalidArgument("%s has no parameter(%zu)", entry->name().c_str(), i);
    }
    if (!Shape::Compatible(arguments[i].shape, parameter->shape())) {
      return InvalidArgument(
          "parameter %zu (%s) is %s, but the argument is %s", i, parameter->NameForErrors().c_str(),
          parameter->shape().ToString(false).c_str(), arguments[i].shape.ToString(false).c_str());
    }
    parameters.push_back(WithShape(arguments[i], parameter->shape()));
  }
  steps_ = 0;
  verified_ = true;  // EvaluateComputation need not verify the module again
  struct VerifiedGuard {
    bool& verified;
    ~VerifiedGuard() { verified = false; }
  } guard{verified_};
  return EvaluateComputation(*entry, parameters);
}

Status HloInterpreter::CheckLimits(const HloInstruction& instruction) {
  if (++steps_ > options_.max_evaluation_steps) {
    return ResourceExhausted(
        "%s: evaluation stopped after %lld instructions evaluated (calls included), the limit "
        "InterpreterOptions::max_evaluation_steps (fp8dot run --max-evaluation-steps)",
        instruction.NameForErrors().c_str(), static_cast<long long>(options_.max_evaluation_steps));
  }
  return CheckElementLimit(instruction, instruction.shape());
}

Status HloInterpreter::CheckElementLimit(const HloInstruction& instruction, const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      FP8_RETURN_IF_ERROR(CheckElementLimit(instruction, element));
    }
    return OkStatus();
  }
  const std::optional<int64_t> count = shape.CheckedElementCount();
  if (!count.has_value() || *count > options_.max_elements) {
    return ResourceExhausted(
        "%s: %s has %s elements, more than the interpreter's limit of %lld per array "
        "(InterpreterOptions::max_elements)",
        instruction.NameForErrors().c_str(), shape.ToString().c_str(),
        count.has_value() ? std::to_string(*count).c_str() : "more than 2^63",
        static_cast<long long>(options_.max_elements));
  }
  return OkStatus();
}

StatusOr<Value> HloInterpreter::EvaluateComputation(const HloComputation& computation,
                                                    const std::vector<Value>& arguments) {
  if (call_depth_ >= kMaxCallDepth) {
    return InvalidArgument("computation %s: calls nest deeper than %d", computation.name().c_str(),
                           kMaxCallDepth);
  }
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr) {
    return InvalidArgument("computation %s has no root", computation.name().c_str());
  }
  if (call_depth_ == 0 && !verified_) {  // a call from outside: verify as Evaluate does
    steps_ = 0;
    FP8_RETURN_IF_ERROR(computation.parent() != nullptr ? VerifyHloModule(*computation.parent())
                                                        : VerifyHloComputation(computation));
  }
  ++call_depth_;
  struct DepthGuard {
    int& depth;
    ~DepthGuard() { --depth; }
  } guard{call_depth_};

  const std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  // How many operand slots still need each value; a value is dropped when that reaches zero.
  std::unordered_map<const HloInstruction*, int64_t> pending_uses;
  for (const HloInstruction* instruction : order) {
    for (const HloInstruction* operand : instruction->operands()) ++pending_uses[operand];
  }
  std::unordered_map<const HloInstruction*, Value> values;
  for (const HloInstruction* instruction : order) {
    std::vector<const Value*> operands;
    operands.reserve(static_cast<size_t>(instruction->operand_count()));
    for (const HloInstruction* operand : instruction->operands()) {
      auto it = values.find(operand);
      if (it == values.end()) {
        return InvalidArgument("%s: operand %s is not in computation %s",
                               instruction->NameForErrors().c_str(),
                               operand->NameForErrors().c_str(), computation.name().c_str());
      }
      operands.push_back(&it->second);
    }
    FP8_RETURN_IF_ERROR(CheckLimits(*instruction));
    FP8_ASSIGN_OR_RETURN(Value value, EvaluateInstruction(*instruction, operands, arguments));
    values[instruction] = std::move(value);
    for (const HloInstruction* operand : instruction->operands()) {
      if (--pending_uses[operand] == 0 && operand != root) values.erase(operand);
    }
  }
  auto it = values.find(root);
  if (it == values.end()) {
    return InvalidArgument("computation %s: the root %s was not evaluated",
                           computation.name().c_str(), root->NameForErrors().c_str());
  }
  return std::move(it->second);
}

namespace {

// reduce(inputs..., inits...), dimensions={...}, to_apply=f: for every result element, fold f
// over the reduced elements in row-major order, starting from the init values.
StatusOr<Value> EvalReduce(HloInterpreter& interpreter, const HloInstruction& instruction,
                           const std::vector<const Value*>& operands) {
  const HloComputation* to_apply = instruction.to_apply();
  const size_t n = operands.size() / 2;
  if (to_apply == nullptr || n == 0 || operands.size() % 2 != 0) {
    return InvalidArgument("%s: reduce needs inputs, as many init values and to_apply=",
                           instruction.NameForErrors().c_str());
  }
  const Shape& input_shape = operands[0]->shape;
  for (size_t j = 0; j < n; ++j) {
    if (operands[j]->IsTuple() || operands[j]->shape.dimensions() != input_shape.dimensions() ||
        operands[n + j]->IsTuple() || operands[n + j]->element_count() != 1) {
      return InvalidArgument("%s: reduce inputs must be arrays of one shape and inits scalars",
                             instruction.NameForErrors().c_str());
    }
  }
  std::vector<bool> reduced(static_cast<size_t>(input_shape.rank()), false);
  for (int64_t d : instruction.dimensions()) {
    if (d < 0 || d >= input_shape.rank()) {
      return InvalidArgument("%s: reduce dimension %lld is out of range for %s",
                             instruction.NameForErrors().c_str(), static_cast<long long>(d),
                             input_shape.ToString().c_str());
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < input_shape.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) out_dims.push_back(input_shape.dimensions(d));
  }
  std::vector<Shape> out_shapes;
  for (size_t j = 0; j < n; ++j) {
    const Shape& shape =
        n == 1 ? instruction.shape()
               : (instruction.shape().IsTuple() &&
                          instruction.shape().tuple_shapes_size() == static_cast<int64_t>(n)
                      ? instruction.shape().tuple_shapes(static_cast<int64_t>(j))
                      : Shape());
    if (!shape.IsArray() || shape.dimensions() != out_dims) {
      return InvalidArgument("%s: the result %s does not match the reduced dims %s",
                             instruction.NameForErrors().c_str(),
                             instruction.shape().ToString().c_str(),
                             DimsToString(out_dims).c_str());
    }
    out_shapes.push_back(shape);
  }
  const std::vector<int64_t> out_strides = internal::RowMajorStrides(out_dims);
  const int64_t out_count = ElementCount(out_dims);
  // acc[j]: the running values of output j, starting at its init value (of its type).
  std::vector<Value> acc;
  for (size_t j = 0; j < n; ++j) {
    const Value& init = *operands[n + j];
    if (init.shape.element_type() != out_shapes[j].element_type()) {
      return InvalidArgument("%s: init value %s is not of the result's type %s",
                             instruction.NameForErrors().c_str(), init.ShapeString().c_str(),
                             out_shapes[j].ToString().c_str());
    }
    acc.push_back(Value::Zeros(out_shapes[j]));
    for (size_t o = 0; o < static_cast<size_t>(out_count); ++o) CopyElement(init, 0, acc[j], o);
  }
  const SimpleCombiner combiner = n == 1 ? AnalyzeCombiner(*to_apply, out_shapes[0].element_type(),
                                                           operands[0]->shape.element_type())
                                         : SimpleCombiner();
  Status status = OkStatus();
  internal::ForEachIndex(
      input_shape.dimensions(), [&](const std::vector<int64_t>& index, int64_t linear) {
        if (!status.ok()) return;
        int64_t out = 0;
        for (size_t d = 0, k = 0; d < index.size(); ++d) {
          if (!reduced[d]) out += index[d] * out_strides[k++];
        }
        const size_t o = static_cast<size_t>(out);
        const size_t i = static_cast<size_t>(linear);
        if (combiner.kind != SimpleCombiner::Kind::kNone) {
          combiner.Apply(out_shapes[0].element_type(), acc[0], o, *operands[0], i);
          return;
        }
        std::vector<Value> arguments;
        for (size_t j = 0; j < n; ++j) arguments.push_back(acc[j].ScalarAt(o));
        for (size_t j = 0; j < n; ++j) arguments.push_back(operands[j]->ScalarAt(i));
        StatusOr<Value> result = interpreter.EvaluateComputation(*to_apply, arguments);
        if (!result.ok()) {
          status = result.status();
          return;
        }
        if (n > 1 && result->elements.size() != n) {  // .at(j) threw std::out_of_range
          status = InvalidArgument("%s: to_apply=%s must return a tuple of %zu scalars, got %s",
                                   instruction.NameForErrors().c_str(), to_apply->name().c_str(), n,
                                   result->ShapeString().c_str());
          return;
        }
        for (size_t j = 0; j < n; ++j) {
          const Value& part = n == 1 ? *result : result->elements[j];
          if (part.IsTuple() || part.element_count() != 1 ||
              part.shape.element_type() != out_shapes[j].element_type()) {
            status = InvalidArgument("%s: to_apply=%s must return scalars of the init types",
                                     instruction.NameForErrors().c_str(), to_apply->name().c_str());
            return;
          }
          CopyElement(part, 0, acc[j], o);
        }
      });
  FP8_RETURN_IF_ERROR(status);
  if (n == 1) return std::move(acc[0]);
  Value value = Value::Tuple(std::move(acc));
  value.shape = instruction.shape();
  return value;
}

// The scatters the interpreter runs: one operand, array operand and updates, integer indices,
// to_apply=, no batching dims.
Status CheckScatterSupported(const HloInstruction& instruction,
                             const std::vector<const Value*>& operands) {
  if (operands.size() != 3 || instruction.to_apply() == nullptr) {
    return Unimplemented(
        "%s: the interpreter runs scatter with one operand, indices, updates and "
        "to_apply= (variadic scatter is not supported)",
        instruction.NameForErrors().c_str());
  }
  const ScatterDimensionNumbers& dnums = instruction.scatter_dimension_numbers();
  if (!dnums.input_batching_dims.empty() || !dnums.scatter_indices_batching_dims.empty()) {
    return Unimplemented("%s: scatter with batching dims is not supported by the interpreter",
                         instruction.NameForErrors().c_str());
  }
  if (operands[0]->IsTuple() || operands[1]->IsTuple() || operands[2]->IsTuple() ||
      !IsIntegralType(operands[1]->shape.element_type())) {
    return InvalidArgument("%s: scatter needs array operand and updates and integer indices",
                           instruction.NameForErrors().c_str());
  }
  return OkStatus();
}

// Where a scatter's update elements go: its dimension numbers read against the operand, indices
// and updates shapes.
struct ScatterIndexing {
  int64_t index_vector_size = 1;             // entries of one index vector (a scatter start)
  std::vector<int64_t> update_scatter_dims;  // updates dims that pick the index vector, in order
  std::vector<int64_t> window_operand_dims;  // operand dims the window spans (not inserted)
  std::vector<int64_t> window_size;          // per operand dim: the window's size, 1 if inserted
  std::vector<int64_t> operand_strides;      // row-major
  std::vector<int64_t> indices_strides;      // row-major
};

// The dims in [0, rank) that `dims` leaves out, in order; an entry of `dims` outside [0, rank) is
// an error naming the attribute `what`.
StatusOr<std::vector<int64_t>> DimsNotListed(const HloInstruction& instruction, const char* what,
                                             const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<bool> listed(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return InvalidArgument("%s: %s entry %lld is out of range",
                             instruction.NameForErrors().c_str(), what, static_cast<long long>(d));
    }
    listed[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> others;
  for (int64_t d = 0; d < rank; ++d) {
    if (!listed[static_cast<size_t>(d)]) others.push_back(d);
  }
  return others;
}

// Checks the dimension numbers against the three shapes and derives the indexing from them.
StatusOr<ScatterIndexing> AnalyzeScatterIndexing(const HloInstruction& instruction,
                                                 const Value& operand, const Value& indices,
                                                 const Value& updates) {
  const ScatterDimensionNumbers& dnums = instruction.scatter_dimension_numbers();
  const int64_t operand_rank = operand.shape.rank();
  const int64_t indices_rank = indices.shape.rank();
  const int64_t index_vector_dim = dnums.index_vector_dim;
  if (index_vector_dim < 0 || index_vector_dim > indices_rank) {
    return InvalidArgument("%s: index_vector_dim=%lld is out of range",
                           instruction.NameForErrors().c_str(),
                           static_cast<long long>(index_vector_dim));
  }
  ScatterIndexing indexing;
  indexing.index_vector_size =
      index_vector_dim == indices_rank ? 1 : indices.shape.dimensions(index_vector_dim);
  FP8_ASSIGN_OR_RETURN(indexing.update_scatter_dims,
                       DimsNotListed(instruction, "update_window_dims", dnums.update_window_dims,
                                     updates.shape.rank()));
  FP8_ASSIGN_OR_RETURN(
      indexing.window_operand_dims,
      DimsNotListed(instruction, "inserted_window_dims", dnums.inserted_window_dims, operand_rank));
  if (indexing.window_operand_dims.size() != dnums.update_window_dims.size() ||
      static_cast<int64_t>(dnums.scatter_dims_to_operand_dims.size()) !=
          indexing.index_vector_size ||
      static_cast<int64_t>(indexing.update_scatter_dims.size()) !=
          indices_rank - (index_vector_dim == indices_rank ? 0 : 1)) {
    return InvalidArgument(
        "%s: inconsistent scatter dimension numbers for operand %s, indices "
        "%s, updates %s",
        instruction.NameForErrors().c_str(), operand.ShapeString().c_str(),
        indices.ShapeString().c_str(), updates.ShapeString().c_str());
  }
  for (int64_t d : dnums.scatter_dims_to_operand_dims) {
    if (d < 0 || d >= operand_rank) {
      return InvalidArgument("%s: scatter_dims_to_operand_dims entry %lld is out of range",
                             instruction.NameForErrors().c_str(), static_cast<long long>(d));
    }
  }
  // The updates' scatter dims index the indices: they must be its dims (index_vector_dim
  // excepted), or ScatterStart reads past the indices.
  for (int64_t d = 0, g = 0; d < indices_rank; ++d) {
    if (d == index_vector_dim) continue;
    const int64_t u = indexing.update_scatter_dims[static_cast<size_t>(g++)];
    if (updates.shape.dimensions(u) != indices.shape.dimensions(d)) {
      return InvalidArgument("%s: updates %s dimension %lld does not match indices %s",
                             instruction.NameForErrors().c_str(), updates.ShapeString().c_str(),
                             static_cast<long long>(u), indices.ShapeString().c_str());
    }
  }
  indexing.window_size.assign(static_cast<size_t>(operand_rank), 1);
  for (size_t k = 0; k < indexing.window_operand_dims.size(); ++k) {
    indexing.window_size[static_cast<size_t>(indexing.window_operand_dims[k])] =
        updates.shape.dimensions(dnums.update_window_dims[k]);
  }
  indexing.operand_strides = internal::RowMajorStrides(operand.shape.dimensions());
  indexing.indices_strides = internal::RowMajorStrides(indices.shape.dimensions());
  return indexing;
}

// The scatter start of update element `u` into `start` (the operand's rank): the index vector
// at u's scatter coordinates, placed on the operand dims scatter_dims_to_operand_dims names.
void ScatterStart(const ScatterDimensionNumbers& dnums, const ScatterIndexing& indexing,
                  const Value& indices, const std::vector<int64_t>& u,
                  std::vector<int64_t>& start) {
  std::fill(start.begin(), start.end(), 0);
  for (int64_t k = 0; k < indexing.index_vector_size; ++k) {
    int64_t offset = 0;
    for (int64_t d = 0, g = 0; d < indices.shape.rank(); ++d) {
      const int64_t coordinate =
          d == dnums.index_vector_dim
              ? k
              : u[static_cast<size_t>(indexing.update_scatter_dims[static_cast<size_t>(g++)])];
      offset += coordinate * indexing.indices_strides[static_cast<size_t>(d)];
    }
    start[static_cast<size_t>(dnums.scatter_dims_to_operand_dims[static_cast<size_t>(k)])] =
        internal::IndexAt(indices, static_cast<size_t>(offset));
  }
}

// The operand element (row-major offset) update element `u` goes to: its scatter start plus its
// window offset; nullopt when the window leaves the operand, which skips it whole, as XLA does.
// `start` is scratch space of the operand's rank.
std::optional<size_t> ScatterTarget(const ScatterDimensionNumbers& dnums,
                                    const ScatterIndexing& indexing, const Value& indices,
                                    const Shape& operand_shape, const std::vector<int64_t>& u,
                                    std::vector<int64_t>& start) {
  ScatterStart(dnums, indexing, indices, u, start);
  int64_t offset = 0;
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    const size_t sd = static_cast<size_t>(d);
    // Written without start + size, which overflows for starts near INT64_MAX.
    if (start[sd] < 0 || start[sd] > operand_shape.dimensions(d) - indexing.window_size[sd]) {
      return std::nullopt;
    }
    offset += start[sd] * indexing.operand_strides[sd];
  }
  for (size_t k = 0; k < indexing.window_operand_dims.size(); ++k) {
    offset += u[static_cast<size_t>(dnums.update_window_dims[k])] *
              indexing.operand_strides[static_cast<size_t>(indexing.window_operand_dims[k])];
  }
  return static_cast<size_t>(offset);
}

// out[o] = to_apply(out[o], updates[i]), evaluated by the interpreter (to_apply has no fast path).
Status CallScatterCombiner(HloInterpreter& interpreter, const HloInstruction& instruction,
                           const Value& updates, size_t i, Value& out, size_t o) {
  const HloComputation& to_apply = *instruction.to_apply();
  StatusOr<Value> result =
      interpreter.EvaluateComputation(to_apply, {out.ScalarAt(o), updates.ScalarAt(i)});
  if (!result.ok()) return result.status();
  if (result->IsTuple() || result->element_count() != 1 ||
      result->shape.element_type() != out.shape.element_type()) {
    return InvalidArgument("%s: to_apply=%s must return a scalar of the operand's type",
                           instruction.NameForErrors().c_str(), to_apply.name().c_str());
  }
  CopyElement(*result, 0, out, o);
  return OkStatus();
}

// scatter(operand, indices, updates), XLA's semantics (one operand, no batching dims): every
// update element U goes to operand[scatter start(U) + window offset(U)] through to_apply(old,
// new); a window that would leave the operand is skipped whole, as XLA does.
StatusOr<Value> EvalScatter(HloInterpreter& interpreter, const HloInstruction& instruction,
                            const std::vector<const Value*>& operands) {
  FP8_RETURN_IF_ERROR(CheckScatterSupported(instruction, operands));
  if (!Shape::Compatible(instruction.shape(), operands[0]->shape)) {
    return InvalidArgument(
        "%s: the result %s is not the operand's shape %s", instruction.NameForErrors().c_str(),
        instruction.shape().ToString().c_str(), operands[0]->ShapeString().c_str());
  }
  const Value& operand = *operands[0];
  const Value& indices = *operands[1];
  const Value& updates = *operands[2];
  FP8_ASSIGN_OR_RETURN(const ScatterIndexing indexing,
                       AnalyzeScatterIndexing(instruction, operand, indices, updates));
  const ScatterDimensionNumbers& dnums = instruction.scatter_dimension_numbers();
  const PrimitiveType type = operand.shape.element_type();  // the result's (Compatible above)
  const SimpleCombiner combiner =
      AnalyzeCombiner(*instruction.to_apply(), type, updates.shape.element_type());
  Value out = operand;
  out.shape = instruction.shape();
  std::vector<int64_t> start(static_cast<size_t>(operand.shape.rank()));
  Status status = OkStatus();
  internal::ForEachIndex(
      updates.shape.dimensions(), [&](const std::vector<int64_t>& u, int64_t linear) {
        if (!status.ok()) return;
        const std::optional<size_t> offset =
            ScatterTarget(dnums, indexing, indices, operand.shape, u, start);
        if (!offset.has_value()) return;
        const size_t i = static_cast<size_t>(linear);
        if (combiner.kind != SimpleCombiner::Kind::kNone) {
          combiner.Apply(type, out, *offset, updates, i);
        } else {
          status = CallScatterCombiner(interpreter, instruction, updates, i, out, *offset);
        }
      });
  FP8_RETURN_IF_ERROR(status);
  return out;
}

Status ExpectOperands(const HloInstruction& instruction, const std::vector<const Value*>& operands,
                      size_t count) {
  if (operands.size() != count) {
    return InvalidArgument("%s: %s takes %zu operands, got %zu",
                           instruction.NameForErrors().c_str(),
                           HloOpcodeString(instruction.opcode()), count, operands.size());
  }
  return OkStatus();
}

// Ops of a fixed operand count: EvalWithOperands checks the count, then runs `eval`.
using EvalOf1 = StatusOr<Value> (*)(const HloInstruction&, const Value&);
using EvalOf2 = StatusOr<Value> (*)(const HloInstruction&, const Value&, const Value&);
using EvalOf3 = StatusOr<Value> (*)(const HloInstruction&, const Value&, const Value&,
                                    const Value&);

StatusOr<Value> EvalWithOperands(const HloInstruction& instruction,
                                 const std::vector<const Value*>& operands, EvalOf1 eval) {
  FP8_RETURN_IF_ERROR(ExpectOperands(instruction, operands, 1));
  return eval(instruction, *operands[0]);
}

StatusOr<Value> EvalWithOperands(const HloInstruction& instruction,
                                 const std::vector<const Value*>& operands, EvalOf2 eval) {
  FP8_RETURN_IF_ERROR(ExpectOperands(instruction, operands, 2));
  return eval(instruction, *operands[0], *operands[1]);
}

StatusOr<Value> EvalWithOperands(const HloInstruction& instruction,
                                 const std::vector<const Value*>& operands, EvalOf3 eval) {
  FP8_RETURN_IF_ERROR(ExpectOperands(instruction, operands, 3));
  return eval(instruction, *operands[0], *operands[1], *operands[2]);
}

// parameter(n): argument n of the computation being evaluated, of the parameter's element type.
// reduce and scatter pass their elements as they are; a to_apply declared with another type (a
// bf16 input summed by an f32 computation, which the verifier lets through) gets them converted,
// as convert would, since its ops read elements as their declared type holds them.
StatusOr<Value> EvalParameter(const HloInstruction& instruction,
                              const std::vector<Value>& parameters) {
  const int64_t number = instruction.parameter_number();
  if (number < 0 || number >= static_cast<int64_t>(parameters.size())) {
    return InvalidArgument("%s: parameter(%lld) but the computation got %zu arguments",
                           instruction.NameForErrors().c_str(), static_cast<long long>(number),
                           parameters.size());
  }
  const Value& argument = parameters[static_cast<size_t>(number)];
  const Shape& shape = instruction.shape();
  if (shape.IsArray() && !argument.IsTuple() &&
      shape.element_type() != argument.shape.element_type()) {
    return internal::EvalConvert(instruction, argument);
  }
  return argument;
}

// constant: the literal's values, floats rounded to the element type.
StatusOr<Value> EvalConstant(const HloInstruction& instruction) {
  const Literal& literal = instruction.literal();
  if (!instruction.shape().IsArray() ||
      literal.element_count() != instruction.shape().ElementCount()) {
    return InvalidArgument(
        "%s: constant has %lld values for %s", instruction.NameForErrors().c_str(),
        static_cast<long long>(literal.element_count()), instruction.shape().ToString().c_str());
  }
  Value value = ValueFromLiteral(literal);
  value.shape = instruction.shape();  // the literal's shape, with the instruction's layout
  return value;
}

// copy and opt-barrier: the operand's values, with the result's layouts.
StatusOr<Value> EvalCopy(const HloInstruction& instruction, const Value& operand) {
  return WithShape(operand, instruction.shape());
}

// call: to_apply= evaluated on the operands.
StatusOr<Value> EvalCall(HloInterpreter& interpreter, const HloInstruction& instruction,
                         const std::vector<const Value*>& operands) {
  const HloComputation* callee = instruction.to_apply();
  if (callee == nullptr) {
    return InvalidArgument("%s: call without to_apply=", instruction.NameForErrors().c_str());
  }
  std::vector<Value> arguments;
  for (const Value* operand : operands) arguments.push_back(*operand);
  return interpreter.EvaluateComputation(*callee, arguments);
}

// tuple: the operands, with the result's layouts.
StatusOr<Value> EvalTuple(const HloInstruction& instruction,
                          const std::vector<const Value*>& operands) {
  std::vector<Value> elements;
  for (const Value* operand : operands) elements.push_back(*operand);
  return WithShape(Value::Tuple(std::move(elements)), instruction.shape());
}

// get-tuple-element: element index= of the tuple operand.
StatusOr<Value> EvalGetTupleElement(const HloInstruction& instruction, const Value& tuple) {
  const int64_t index = instruction.tuple_index();
  if (!tuple.IsTuple() || index < 0 || index >= static_cast<int64_t>(tuple.elements.size())) {
    return InvalidArgument("%s: index=%lld is out of range for %s",
                           instruction.NameForErrors().c_str(), static_cast<long long>(index),
                           tuple.ShapeString().c_str());
  }
  return tuple.elements[static_cast<size_t>(index)];
}

// custom-call: the cuBLASLt GEMM targets (run on the dot backend); no other target.
StatusOr<Value> EvalCustomCall(HloInterpreter& interpreter, const HloInstruction& instruction,
                               const std::vector<const Value*>& operands) {
  if (IsGemmTarget(instruction.custom_call_target())) {
    return internal::EvalGemmCustomCall(interpreter, instruction, operands);
  }
  return Unimplemented(
      "%s: custom-call target \"%s\" is not supported by the interpreter (only %s and %s)",
      instruction.NameForErrors().c_str(), instruction.custom_call_target().c_str(),
      kCublasLtMatmulF8Target, kCublasLtMatmulTarget);
}

}  // namespace

StatusOr<Value> HloInterpreter::EvaluateInstruction(const HloInstruction& instruction,
                                                    const std::vector<const Value*>& operands,
                                                    const std::vector<Value>& parameters) {
  const HloOpcode opcode = instruction.opcode();
  if (opcode != HloOpcode::kCompare && IsElementwiseBinary(opcode)) {
    return EvalWithOperands(instruction, operands, internal::EvalBinary);
  }
  // Copy and reduce-precision are elementwise unary too, but have their own cases below.
  if (opcode != HloOpcode::kConvert && opcode != HloOpcode::kCopy &&
      opcode != HloOpcode::kReducePrecision && opcode != HloOpcode::kBitcastConvert &&
      IsElementwiseUnary(opcode)) {
    return EvalWithOperands(instruction, operands, internal::EvalUnary);
  }
  switch (opcode) {
    case HloOpcode::kParameter:
      return EvalParameter(instruction, parameters);
    case HloOpcode::kConstant:
      return EvalConstant(instruction);
    case HloOpcode::kIsFinite:
      return EvalWithOperands(instruction, operands, internal::EvalUnary);
    case HloOpcode::kCompare:
      return EvalWithOperands(instruction, operands, internal::EvalCompare);
    case HloOpcode::kConvert:
      return EvalWithOperands(instruction, operands, internal::EvalConvert);
    case HloOpcode::kReducePrecision:
      return EvalWithOperands(instruction, operands, internal::EvalReducePrecision);
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
      return EvalWithOperands(instruction, operands, EvalCopy);
    case HloOpcode::kSelect:
      return EvalWithOperands(instruction, operands, internal::EvalSelect);
    case HloOpcode::kClamp:
      return EvalWithOperands(instruction, operands, internal::EvalClamp);
    case HloOpcode::kBroadcast:
      return EvalWithOperands(instruction, operands, internal::EvalBroadcast);
    case HloOpcode::kReshape:
      return EvalWithOperands(instruction, operands, internal::EvalReshape);
    case HloOpcode::kBitcast:
      return EvalWithOperands(instruction, operands, internal::EvalBitcast);
    case HloOpcode::kTranspose:
      return EvalWithOperands(instruction, operands, internal::EvalTranspose);
    case HloOpcode::kSlice:
      return EvalWithOperands(instruction, operands, internal::EvalSlice);
    case HloOpcode::kReverse:
      return EvalWithOperands(instruction, operands, internal::EvalReverse);
    case HloOpcode::kDynamicSlice:
      if (operands.empty()) return ExpectOperands(instruction, operands, 2);
      return internal::EvalDynamicSlice(instruction, operands);
    case HloOpcode::kDynamicUpdateSlice:
      return internal::EvalDynamicUpdateSlice(instruction, operands);
    case HloOpcode::kConcatenate:
      return internal::EvalConcatenate(instruction, operands);
    case HloOpcode::kPad:
      return EvalWithOperands(instruction, operands, internal::EvalPad);
    case HloOpcode::kIota:
      return internal::EvalIota(instruction);
    case HloOpcode::kReduce:
      return EvalReduce(*this, instruction, operands);
    case HloOpcode::kScatter:
      return EvalScatter(*this, instruction, operands);
    case HloOpcode::kDot:
      FP8_RETURN_IF_ERROR(ExpectOperands(instruction, operands, 2));
      return internal::EvalDot(*this, instruction, *operands[0], *operands[1]);
    case HloOpcode::kCall:
      return EvalCall(*this, instruction, operands);
    case HloOpcode::kTuple:
      return EvalTuple(instruction, operands);
    case HloOpcode::kGetTupleElement:
      return EvalWithOperands(instruction, operands, EvalGetTupleElement);
    case HloOpcode::kCustomCall:
      return EvalCustomCall(*this, instruction, operands);
    default:
      break;
  }
  return Unimplemented("%s: %s is not supported by the interpreter",
                       instruction.NameForErrors().c_str(), HloOpcodeString(opcode));
}

}  // namespace fp8dot::hlo
