// The HLO IR: HloModule owns HloComputations, which own HloInstructions. Parsed from and printed
// to XLA's HLO text (hlo_parser.h, HloModule::ToString), checked by hlo_verifier.h.
//
// Usage (a rewriter replacing a dot with a custom call):
//
//   FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text, "m.hlo"));
//   HloComputation* entry = module->entry_computation();
//   for (HloInstruction* dot : entry->MakeInstructionPostOrder()) {
//     if (dot->opcode() != HloOpcode::kDot) continue;
//     HloInstruction* lhs = dot->mutable_operand(0);   // walk operands ...
//     for (HloInstruction* user : dot->users()) { ... }  // ... and users
//     HloInstruction* gemm = entry->AddInstruction(HloInstruction::CreateCustomCall(
//         Shape::MakeTuple({dot->shape(), Shape::MakeArray(PrimitiveType::kS8, {0})}),
//         {lhs, dot->mutable_operand(1), scale_a, scale_b}, "__cublas$lt$matmul$f8",
//         R"({"gemm_backend_config":{"alpha_real":1,...}})"));
//     HloInstruction* result = entry->AddInstruction(
//         HloInstruction::CreateGetTupleElement(gemm, 0));
//     FP8_RETURN_IF_ERROR(dot->ReplaceAllUsesWith(result));  // the root moves too
//   }
//   entry->RemoveDeadCode();           // the dot and its now unused dequantisation
//   FP8_RETURN_IF_ERROR(VerifyHloModule(*module));
//   std::string text = module->ToString();
//
// Ownership and invariants:
// - Operands and users are raw pointers into the same computation; users() lists each user once,
//   even when it uses the instruction twice (multiply(x, x)).
// - Instruction names are unique in the module; AddInstruction renames ("dot.1" -> "dot.2") when
//   a name is taken, and names an unnamed instruction after its opcode.
// - The instruction list keeps insertion order; printing and MakeInstructionPostOrder() sort it
//   so that every operand comes before its users, so appended replacements print fine.
// - Attributes the IR types (see HloInstruction) are fields with accessors; every other
//   attribute (metadata, sharding, frontend_attributes, type=, window=, ...) is kept as raw
//   text, in order, and printed back verbatim.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fp8dot/dot_spec.h"
#include "fp8dot/hlo/hlo_opcode.h"
#include "fp8dot/hlo/shape.h"
#include "fp8dot/precision.h"
#include "fp8dot/status.h"

namespace fp8dot::hlo {

class HloComputation;
class HloModule;

// The value of a constant: an array shape and its elements in row-major (logical) order, all
// exact: float types as doubles (which hold every float type fp8dot knows), pred and integers as
// int64 in shape.h's form (IsPredOrIntegralType), so all of s64's and u64's range. Prints as XLA
// does: "1", "-inf", "nan", "{ {1, 2}, {3, 4} }", "true", "18446744073709551615".
struct Literal {
  Shape shape;
  // shape.ElementCount() elements in one of these, as the element type says:
  std::vector<double> values;     // float types
  std::vector<int64_t> integers;  // pred and integer types

  // A scalar; for pred and integer types `value` is truncated and wrapped (IntegerFromDouble).
  static Literal Scalar(PrimitiveType type, double value);
  // The elements held, in whichever vector the element type uses.
  int64_t element_count() const;
  // "1" for a scalar, "{1, 2}" for rank 1, "{ {1, 2}, {3, 4} }" for rank 2, ...
  std::string ToString() const;
};

// One dimension of slice={[start:limit:stride], ...}.
struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
};

// One dimension of padding=low_high_interior x ... (interior optional in the text).
struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
};

// The size of a dimension of `size` elements padded by `p`: low + size + (size-1)*interior + high.
// nullopt when interior < 0, the result is negative, or any step overflows int64.
std::optional<int64_t> PaddedDimensionSize(int64_t size, const PaddingDimension& p);

enum class ComparisonDirection { kEq, kNe, kLt, kLe, kGt, kGe };
const char* ComparisonDirectionString(ComparisonDirection direction);  // "EQ", "LT", ...
StatusOr<ComparisonDirection> ParseComparisonDirection(std::string_view text);

// XLA's ScatterDimensionNumbers (the attributes of a scatter instruction).
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
};

// An attribute the IR does not type: name=value, value verbatim ("{op_name=\"jit(f)/dot\"}").
struct RawAttribute {
  std::string name;
  std::string value;
};

// A computation an instruction calls, with the attribute that names it: "to_apply" (reduce,
// call, map, scatter, sort), "calls" (fusion, custom-call), "condition"/"body" (while),
// "branch_computations", "true_computation", "false_computation" (conditional).
struct CalledComputation {
  std::string attribute;
  HloComputation* computation = nullptr;
};

class HloInstruction {
 public:
  // ---- Factories. Operands must live in the computation the instruction is added to. ---------
  // Any opcode; attributes are set afterwards through the mutable accessors.
  static std::unique_ptr<HloInstruction> Create(HloOpcode opcode, Shape shape,
                                                std::vector<HloInstruction*> operands = {});
  static std::unique_ptr<HloInstruction> CreateParameter(int64_t number, Shape shape,
                                                         std::string name);
  static std::unique_ptr<HloInstruction> CreateConstant(Literal literal);
  static std::unique_ptr<HloInstruction> CreateUnary(Shape shape, HloOpcode opcode,
                                                     HloInstruction* operand);
  static std::unique_ptr<HloInstruction> CreateBinary(Shape shape, HloOpcode opcode,
                                                      HloInstruction* lhs, HloInstruction* rhs);
  static std::unique_ptr<HloInstruction> CreateCompare(Shape shape, HloInstruction* lhs,
                                                       HloInstruction* rhs,
                                                       ComparisonDirection direction);
  static std::unique_ptr<HloInstruction> CreateConvert(Shape shape, HloInstruction* operand);
  // broadcast: operand dim i becomes output dim dimensions[i].
  static std::unique_ptr<HloInstruction> CreateBroadcast(Shape shape, HloInstruction* operand,
                                                         std::vector<int64_t> dimensions);
  static std::unique_ptr<HloInstruction> CreateReshape(Shape shape, HloInstruction* operand);
  static std::unique_ptr<HloInstruction> CreateBitcast(Shape shape, HloInstruction* operand);
  // transpose: output dim i is operand dim dimensions[i].
  static std::unique_ptr<HloInstruction> CreateTranspose(Shape shape, HloInstruction* operand,
                                                         std::vector<int64_t> dimensions);
  static std::unique_ptr<HloInstruction> CreateSlice(Shape shape, HloInstruction* operand,
                                                     std::vector<SliceDimension> slice);
  static std::unique_ptr<HloInstruction> CreateDot(Shape shape, HloInstruction* lhs,
                                                   HloInstruction* rhs,
                                                   DotDimensionNumbers dimension_numbers,
                                                   PrecisionConfig precision_config = {});
  static std::unique_ptr<HloInstruction> CreateReduce(Shape shape, HloInstruction* operand,
                                                      HloInstruction* init_value,
                                                      std::vector<int64_t> dimensions,
                                                      HloComputation* to_apply);
  static std::unique_ptr<HloInstruction> CreateTuple(std::vector<HloInstruction*> elements);
  static std::unique_ptr<HloInstruction> CreateGetTupleElement(HloInstruction* tuple,
                                                               int64_t index);
  // custom-call(operands...), custom_call_target="target", backend_config=... The backend
  // config is kept as text: a JSON object ("{...}") prints bare, anything else quoted.
  static std::unique_ptr<HloInstruction> CreateCustomCall(Shape shape,
                                                          std::vector<HloInstruction*> operands,
                                                          std::string target,
                                                          std::string backend_config = "");

  // ---- Identity --------------------------------------------------------------------------------
  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  // Only before AddInstruction (or through HloComputation, which keeps names unique).
  void set_name(std::string name);
  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }
  HloComputation* parent() const { return parent_; }
  // Line in the parsed text (1-based); 0 for instructions built in code.
  int source_line() const { return source_line_; }
  void set_source_line(int line) { source_line_ = line; }
  // "%dot.3 (line 12)" or "%dot.3": how errors name an instruction.
  std::string NameForErrors() const;

  // ---- Operands and users ------------------------------------------------------------------
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  const HloInstruction* operand(int64_t i) const { return operands_[static_cast<size_t>(i)]; }
  HloInstruction* mutable_operand(int64_t i) { return operands_[static_cast<size_t>(i)]; }
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  bool IsRoot() const;
  void AppendOperand(HloInstruction* operand);
  // Replaces operand i (updates both users lists).
  void ReplaceOperandWith(int64_t i, HloInstruction* new_operand);
  // Every use of this instruction becomes a use of `replacement` (and the root moves, if this
  // was the root). Fails if the shapes are not Compatible() or they live in different
  // computations.
  Status ReplaceAllUsesWith(HloInstruction* replacement);
  // Same, without the shape check (e.g. a bitcast-like replacement whose type changes).
  Status ReplaceAllUsesWithDifferentShape(HloInstruction* replacement);

  // ---- Called computations ---------------------------------------------------------------------
  const std::vector<CalledComputation>& called_computations() const { return called_; }
  // The computation named by to_apply= (reduce, call, map, scatter, sort), or nullptr.
  HloComputation* to_apply() const { return CalledBy("to_apply"); }
  // The first computation named by `attribute`, or nullptr.
  HloComputation* CalledBy(std::string_view attribute) const;
  void AddCalledComputation(std::string attribute, HloComputation* computation) {
    called_.push_back({std::move(attribute), computation});
  }

  // ---- Typed attributes (which ones an opcode uses: see the comments) --------------------------
  // parameter(N)
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }
  // constant(...)
  const Literal& literal() const { return literal_; }
  Literal* mutable_literal() { return &literal_; }
  // dimensions={...}: broadcast, transpose, reduce, concatenate (one entry), reverse, sort.
  const std::vector<int64_t>& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[static_cast<size_t>(i)]; }
  std::vector<int64_t>* mutable_dimensions() { return &dimensions_; }
  bool has_dimensions() const { return has_dimensions_; }
  void set_dimensions(std::vector<int64_t> dims) {
    dimensions_ = std::move(dims);
    has_dimensions_ = true;
  }
  // dot: lhs_batch_dims / lhs_contracting_dims / rhs_batch_dims / rhs_contracting_dims.
  const DotDimensionNumbers& dot_dimension_numbers() const { return dot_dimension_numbers_; }
  DotDimensionNumbers* mutable_dot_dimension_numbers() { return &dot_dimension_numbers_; }
  // dot: operand_precision={default,highest}, algorithm=dot_any_f8_any_f8_f32_fast_accum.
  // Defaults (DEFAULT, DEFAULT, unset) when absent from the text; printed only when not default.
  const PrecisionConfig& precision_config() const { return precision_config_; }
  PrecisionConfig* mutable_precision_config() { return &precision_config_; }
  // slice={[0:2:1], [1:3]}
  const std::vector<SliceDimension>& slice() const { return slice_; }
  std::vector<SliceDimension>* mutable_slice() { return &slice_; }
  // pad: padding=0_0x1_2_1
  const std::vector<PaddingDimension>& padding() const { return padding_; }
  std::vector<PaddingDimension>* mutable_padding() { return &padding_; }
  // compare: direction=LT. (compare's type=TOTALORDER stays a raw attribute.)
  std::optional<ComparisonDirection> comparison_direction() const { return direction_; }
  void set_comparison_direction(ComparisonDirection d) { direction_ = d; }
  // get-tuple-element: index=N
  int64_t tuple_index() const { return tuple_index_; }
  void set_tuple_index(int64_t index) { tuple_index_ = index; }
  // iota: iota_dimension=N
  int64_t iota_dimension() const { return iota_dimension_; }
  void set_iota_dimension(int64_t d) { iota_dimension_ = d; }
  // dynamic-slice: dynamic_slice_sizes={...}
  const std::vector<int64_t>& dynamic_slice_sizes() const { return dynamic_slice_sizes_; }
  std::vector<int64_t>* mutable_dynamic_slice_sizes() { return &dynamic_slice_sizes_; }
  // custom-call: custom_call_target="..."
  const std::string& custom_call_target() const { return custom_call_target_; }
  void set_custom_call_target(std::string target) { custom_call_target_ = std::move(target); }
  // backend_config={...} or backend_config="...": the JSON (or other) text, unquoted. Empty when
  // absent.
  const std::string& backend_config() const { return backend_config_; }
  void set_backend_config(std::string config) { backend_config_ = std::move(config); }
  // scatter: update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
  // input_batching_dims, scatter_indices_batching_dims, index_vector_dim; indices_are_sorted,
  // unique_indices.
  const ScatterDimensionNumbers& scatter_dimension_numbers() const { return scatter_dnums_; }
  ScatterDimensionNumbers* mutable_scatter_dimension_numbers() { return &scatter_dnums_; }
  bool indices_are_sorted() const { return indices_are_sorted_; }
  void set_indices_are_sorted(bool v) { indices_are_sorted_ = v; }
  bool unique_indices() const { return unique_indices_; }
  void set_unique_indices(bool v) { unique_indices_ = v; }
  // reduce-precision: exponent_bits=N, mantissa_bits=N
  int64_t exponent_bits() const { return exponent_bits_; }
  int64_t mantissa_bits() const { return mantissa_bits_; }
  void set_exponent_bits(int64_t v) { exponent_bits_ = v; }
  void set_mantissa_bits(int64_t v) { mantissa_bits_ = v; }

  // Everything else, verbatim and in text order (metadata, sharding, frontend_attributes, ...).
  const std::vector<RawAttribute>& raw_attributes() const { return raw_attributes_; }
  std::vector<RawAttribute>* mutable_raw_attributes() { return &raw_attributes_; }
  // The raw value of attribute `name`, or nullptr.
  const std::string* FindRawAttribute(std::string_view name) const;
  // metadata={op_name="..."}: the op_name, or "" when absent.
  std::string metadata_op_name() const;

  // "%name = f32[2]{0} add(%a, %b), attrs..." (no indentation, no ROOT).
  std::string ToString() const;

 private:
  friend class HloComputation;
  HloInstruction(HloOpcode opcode, Shape shape) : opcode_(opcode), shape_(std::move(shape)) {}
  void AddUser(HloInstruction* user);
  void RemoveUser(HloInstruction* user);
  Status ReplaceUsesImpl(HloInstruction* replacement);

  HloOpcode opcode_;
  std::string name_;
  Shape shape_;
  HloComputation* parent_ = nullptr;
  int source_line_ = 0;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<CalledComputation> called_;

  int64_t parameter_number_ = -1;
  Literal literal_;
  std::vector<int64_t> dimensions_;
  bool has_dimensions_ = false;
  DotDimensionNumbers dot_dimension_numbers_ = {};
  PrecisionConfig precision_config_;
  std::vector<SliceDimension> slice_;
  std::vector<PaddingDimension> padding_;
  std::optional<ComparisonDirection> direction_;
  int64_t tuple_index_ = -1;
  int64_t iota_dimension_ = -1;
  std::vector<int64_t> dynamic_slice_sizes_;
  std::string custom_call_target_;
  std::string backend_config_;
  ScatterDimensionNumbers scatter_dnums_;
  bool indices_are_sorted_ = false;
  bool unique_indices_ = false;
  int64_t exponent_bits_ = -1;
  int64_t mantissa_bits_ = -1;
  std::vector<RawAttribute> raw_attributes_;
};

class HloComputation {
 public:
  const std::string& name() const { return name_; }
  HloModule* parent() const { return parent_; }
  bool IsEntry() const;

  // Instructions in insertion order (the text order for parsed modules).
  std::vector<HloInstruction*> instructions() const;
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // Every instruction after all of its operands; otherwise in insertion order.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;
  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* root) { root_ = root; }
  // parameter(i) is parameter_instruction(i); nullptr if missing.
  HloInstruction* parameter_instruction(int64_t i) const;
  const std::vector<HloInstruction*>& parameter_instructions() const { return parameters_; }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  // The instruction called `name` (without '%'), or nullptr. A hash lookup.
  HloInstruction* GetInstructionWithName(std::string_view name) const;

  // Takes ownership; gives the instruction a module-unique name (see hlo_ir.h). A parameter is
  // registered as parameter parameter_number(). Returns the added instruction.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  // Deletes an instruction that has no users and is not the root.
  Status RemoveInstruction(HloInstruction* instruction);
  // old->ReplaceAllUsesWith(replacement), then removes old.
  Status ReplaceInstruction(HloInstruction* old_instruction, HloInstruction* replacement);
  // Removes every instruction that the root does not depend on, except parameters and
  // instructions with side effects (custom-call, infeed, outfeed, rng...). Returns how many.
  int64_t RemoveDeadCode();

  // "%name (p0: f32[2], ...) -> f32[2] {\n  ...\n}".
  std::string ToString() const;

 private:
  friend class HloModule;
  friend class HloInstruction;
  explicit HloComputation(std::string name) : name_(std::move(name)) {}

  std::string name_;
  HloModule* parent_ = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> parameters_;  // indexed by parameter number
  std::unordered_map<std::string, HloInstruction*> instructions_by_name_;  // instructions_ by name
  HloInstruction* root_ = nullptr;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  // Computations in definition order; callees come before their callers.
  std::vector<HloComputation*> computations() const;
  HloComputation* entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation* entry) { entry_ = entry; }
  // The computation called `name`, or nullptr. A hash lookup: modules with 10^5 computations
  // parse in linear time.
  HloComputation* GetComputationWithName(std::string_view name) const;
  // Creates an empty computation with a module-unique name (renamed if taken).
  HloComputation* AddComputation(std::string name);

  // The header's attributes (entry_computation_layout={...}, ...), verbatim and in order.
  const std::vector<RawAttribute>& header_attributes() const { return header_attributes_; }
  std::vector<RawAttribute>* mutable_header_attributes() { return &header_attributes_; }

  // The whole module in HLO text; parses back to the same module.
  std::string ToString() const;

  // A name that no instruction in the module has yet: `prefix`, or prefix.N.
  std::string UniqueInstructionName(std::string_view prefix);

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  std::unordered_map<std::string, HloComputation*> computations_by_name_;  // computations_ by name
  HloComputation* entry_ = nullptr;
  std::vector<RawAttribute> header_attributes_;
  std::set<std::string, std::less<>> taken_names_;  // instruction names in use
  friend class HloComputation;
};

}  // namespace fp8dot::hlo
