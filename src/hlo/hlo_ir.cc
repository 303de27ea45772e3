// The HLO IR (include/fp8dot/hlo/hlo_ir.h): instruction factories, use-def maintenance, the
// mutation helpers passes need, and the printer (HloModule::ToString).
#include "fp8dot/hlo/hlo_ir.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace fp8dot::hlo {
namespace {

std::string JoinInts(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  return out;
}

std::string Braced(const std::vector<int64_t>& values) { return "{" + JoinInts(values) + "}"; }

// Element i of a literal, printed so that it parses back to the same value.
std::string ElementToString(const Literal& literal, size_t i) {
  const PrimitiveType type = literal.shape.element_type();
  if (IsPredOrIntegralType(type)) {
    const int64_t v = i < literal.integers.size() ? literal.integers[i] : 0;
    if (type == PrimitiveType::kPred) return v != 0 ? "true" : "false";
    return IsSignedIntegralType(type) ? std::to_string(v)
                                      : std::to_string(static_cast<uint64_t>(v));
  }
  const double value = i < literal.values.size() ? literal.values[i] : 0.0;
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

void AppendLiteral(const Literal& literal, size_t dim, size_t* next, std::string* out) {
  const std::vector<int64_t>& dims = literal.shape.dimensions();
  const bool innermost = dim + 1 == dims.size();
  *out += innermost ? "{" : "{ ";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i > 0) *out += ", ";
    if (innermost) {
      *out += ElementToString(literal, (*next)++);
    } else {
      AppendLiteral(literal, dim + 1, next, out);
    }
  }
  *out += innermost ? "}" : " }";
}

// "\"text\"" with XLA's C escapes.
std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string LowerAlgorithmName(Algorithm algorithm) {
  // "ALG_DOT_ANY_F8_ANY_F8_F32" -> "dot_any_f8_any_f8_f32", what XLA prints.
  std::string name = AlgorithmName(algorithm);
  if (name.rfind("ALG_", 0) == 0) name = name.substr(4);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

bool HasSideEffect(const HloInstruction* instruction) {
  switch (instruction->opcode()) {
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kRng:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kParameter:
      return true;
    case HloOpcode::kCustomCall: {
      const std::string* flag = instruction->FindRawAttribute("custom_call_has_side_effect");
      return flag != nullptr && *flag == "true";
    }
    default:
      return false;
  }
}

}  // namespace

// ---- Literal, ComparisonDirection ------------------------------------------------------------

Literal Literal::Scalar(PrimitiveType type, double value) {
  Literal literal{Shape::MakeScalar(type), {}, {}};
  if (IsPredOrIntegralType(type)) {
    literal.integers.push_back(IntegerFromDouble(value, type));
  } else {
    literal.values.push_back(value);
  }
  return literal;
}

int64_t Literal::element_count() const {
  return static_cast<int64_t>(IsPredOrIntegralType(shape.element_type()) ? integers.size()
                                                                         : values.size());
}

std::string Literal::ToString() const {
  if (shape.rank() == 0) return ElementToString(*this, 0);
  std::string out;
  size_t next = 0;
  AppendLiteral(*this, 0, &next, &out);
  return out;
}

const char* ComparisonDirectionString(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return "EQ";
    case ComparisonDirection::kNe:
      return "NE";
    case ComparisonDirection::kLt:
      return "LT";
    case ComparisonDirection::kLe:
      return "LE";
    case ComparisonDirection::kGt:
      return "GT";
    case ComparisonDirection::kGe:
      return "GE";
  }
  return "?";
}

StatusOr<ComparisonDirection> ParseComparisonDirection(std::string_view text) {
  for (ComparisonDirection d :
       {ComparisonDirection::kEq, ComparisonDirection::kNe, ComparisonDirection::kLt,
        ComparisonDirection::kLe, ComparisonDirection::kGt, ComparisonDirection::kGe}) {
    if (text == ComparisonDirectionString(d)) return d;
  }
  return InvalidArgument("unknown comparison direction '%.*s' (expected EQ, NE, LT, LE, GT or GE)",
                         static_cast<int>(text.size()), text.data());
}

// ---- HloInstruction: factories -------------------------------------------------------------

std::unique_ptr<HloInstruction> HloInstruction::Create(HloOpcode opcode, Shape shape,
                                                       std::vector<HloInstruction*> operands) {
  std::unique_ptr<HloInstruction> instruction(new HloInstruction(opcode, std::move(shape)));
  for (HloInstruction* operand : operands) instruction->AppendOperand(operand);
  return instruction;
}

void HloInstruction::set_name(std::string name) {
  if (parent_ != nullptr) {  // keep the computation's index right
    auto it = parent_->instructions_by_name_.find(name_);
    if (it != parent_->instructions_by_name_.end() && it->second == this) {
      parent_->instructions_by_name_.erase(it);
    }
    parent_->instructions_by_name_[name] = this;
  }
  name_ = std::move(name);
}

std::unique_ptr<HloInstruction> HloInstruction::CreateParameter(int64_t number, Shape shape,
                                                                std::string name) {
  auto instruction = Create(HloOpcode::kParameter, std::move(shape));
  instruction->parameter_number_ = number;
  instruction->name_ = std::move(name);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConstant(Literal literal) {
  auto instruction = Create(HloOpcode::kConstant, literal.shape);
  instruction->literal_ = std::move(literal);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateUnary(Shape shape, HloOpcode opcode,
                                                            HloInstruction* operand) {
  return Create(opcode, std::move(shape), {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateBinary(Shape shape, HloOpcode opcode,
                                                             HloInstruction* lhs,
                                                             HloInstruction* rhs) {
  return Create(opcode, std::move(shape), {lhs, rhs});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateCompare(Shape shape, HloInstruction* lhs,
                                                              HloInstruction* rhs,
                                                              ComparisonDirection direction) {
  auto instruction = Create(HloOpcode::kCompare, std::move(shape), {lhs, rhs});
  instruction->direction_ = direction;
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConvert(Shape shape,
                                                              HloInstruction* operand) {
  return Create(HloOpcode::kConvert, std::move(shape), {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateBroadcast(Shape shape,
                                                                HloInstruction* operand,
                                                                std::vector<int64_t> dimensions) {
  auto instruction = Create(HloOpcode::kBroadcast, std::move(shape), {operand});
  instruction->set_dimensions(std::move(dimensions));
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateReshape(Shape shape,
                                                              HloInstruction* operand) {
  return Create(HloOpcode::kReshape, std::move(shape), {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateBitcast(Shape shape,
                                                              HloInstruction* operand) {
  return Create(HloOpcode::kBitcast, std::move(shape), {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateTranspose(Shape shape,
                                                                HloInstruction* operand,
                                                                std::vector<int64_t> dimensions) {
  auto instruction = Create(HloOpcode::kTranspose, std::move(shape), {operand});
  instruction->set_dimensions(std::move(dimensions));
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateSlice(Shape shape, HloInstruction* operand,
                                                            std::vector<SliceDimension> slice) {
  auto instruction = Create(HloOpcode::kSlice, std::move(shape), {operand});
  instruction->slice_ = std::move(slice);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateDot(Shape shape, HloInstruction* lhs,
                                                          HloInstruction* rhs,
                                                          DotDimensionNumbers dimension_numbers,
                                                          PrecisionConfig precision_config) {
  auto instruction = Create(HloOpcode::kDot, std::move(shape), {lhs, rhs});
  instruction->dot_dimension_numbers_ = std::move(dimension_numbers);
  instruction->precision_config_ = std::move(precision_config);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateReduce(Shape shape, HloInstruction* operand,
                                                             HloInstruction* init_value,
                                                             std::vector<int64_t> dimensions,
                                                             HloComputation* to_apply) {
  auto instruction = Create(HloOpcode::kReduce, std::move(shape), {operand, init_value});
  instruction->set_dimensions(std::move(dimensions));
  instruction->AddCalledComputation("to_apply", to_apply);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateTuple(std::vector<HloInstruction*> elements) {
  std::vector<Shape> shapes;
  for (const HloInstruction* element : elements) shapes.push_back(element->shape());
  return Create(HloOpcode::kTuple, Shape::MakeTuple(std::move(shapes)), std::move(elements));
}

std::unique_ptr<HloInstruction> HloInstruction::CreateGetTupleElement(HloInstruction* tuple,
                                                                      int64_t index) {
  Shape shape;
  if (tuple->shape().IsTuple() && index >= 0 && index < tuple->shape().tuple_shapes_size()) {
    shape = tuple->shape().tuple_shapes(index);
  }
  auto instruction = Create(HloOpcode::kGetTupleElement, std::move(shape), {tuple});
  instruction->tuple_index_ = index;
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateCustomCall(
    Shape shape, std::vector<HloInstruction*> operands, std::string target,
    std::string backend_config) {
  auto instruction = Create(HloOpcode::kCustomCall, std::move(shape), std::move(operands));
  instruction->custom_call_target_ = std::move(target);
  instruction->backend_config_ = std::move(backend_config);
  return instruction;
}

// ---- HloInstruction: use-def -----------------------------------------------------------------

std::string HloInstruction::NameForErrors() const {
  std::string out = "%" + name_;
  if (source_line_ > 0) out += " (line " + std::to_string(source_line_) + ")";
  return out;
}

bool HloInstruction::IsRoot() const {
  return parent_ != nullptr && parent_->root_instruction() == this;
}

void HloInstruction::AddUser(HloInstruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) users_.push_back(user);
}

void HloInstruction::RemoveUser(HloInstruction* user) {
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
}

void HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* new_operand) {
  HloInstruction* old_operand = operands_[static_cast<size_t>(i)];
  if (old_operand == new_operand) return;
  operands_[static_cast<size_t>(i)] = new_operand;
  new_operand->AddUser(this);
  if (std::find(operands_.begin(), operands_.end(), old_operand) == operands_.end()) {
    old_operand->RemoveUser(this);
  }
}

Status HloInstruction::ReplaceAllUsesWith(HloInstruction* replacement) {
  if (!Shape::Compatible(shape_, replacement->shape())) {
    return InvalidArgument("cannot replace %s (%s) with %s (%s): shapes differ",
                           NameForErrors().c_str(), shape_.ToString().c_str(),
                           replacement->NameForErrors().c_str(),
                           replacement->shape().ToString().c_str());
  }
  return ReplaceUsesImpl(replacement);
}

Status HloInstruction::ReplaceAllUsesWithDifferentShape(HloInstruction* replacement) {
  return ReplaceUsesImpl(replacement);
}

Status HloInstruction::ReplaceUsesImpl(HloInstruction* replacement) {
  if (replacement == this) return OkStatus();
  if (replacement->parent_ != parent_) {
    return InvalidArgument("cannot replace %s with %s: they are in different computations",
                           NameForErrors().c_str(), replacement->NameForErrors().c_str());
  }
  const std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) {
    if (user == replacement) continue;  // e.g. the replacement consumes this instruction
    for (HloInstruction*& operand : user->operands_) {
      if (operand == this) operand = replacement;
    }
    replacement->AddUser(user);
    RemoveUser(user);
  }
  if (parent_ != nullptr && parent_->root_ == this) parent_->root_ = replacement;
  return OkStatus();
}

HloComputation* HloInstruction::CalledBy(std::string_view attribute) const {
  for (const CalledComputation& called : called_) {
    if (called.attribute == attribute) return called.computation;
  }
  return nullptr;
}

const std::string* HloInstruction::FindRawAttribute(std::string_view name) const {
  for (const RawAttribute& attribute : raw_attributes_) {
    if (attribute.name == name) return &attribute.value;
  }
  return nullptr;
}

std::string HloInstruction::metadata_op_name() const {
  const std::string* metadata = FindRawAttribute("metadata");
  if (metadata == nullptr) return "";
  const size_t start = metadata->find("op_name=\"");
  if (start == std::string::npos) return "";
  std::string out;
  for (size_t i = start + 9; i < metadata->size(); ++i) {
    const char c = (*metadata)[i];
    if (c == '"') break;
    if (c == '\\' && i + 1 < metadata->size()) {
      out += (*metadata)[++i];
      continue;
    }
    out += c;
  }
  return out;
}

// ---- Printer -------------------------------------------------------------------------------

std::string HloInstruction::ToString() const {
  std::string out = "%" + name_ + " = " + shape_.ToString() + " " + HloOpcodeString(opcode_) + "(";
  if (opcode_ == HloOpcode::kParameter) {
    out += std::to_string(parameter_number_);
  } else if (opcode_ == HloOpcode::kConstant) {
    out += literal_.ToString();
  } else {
    for (size_t i = 0; i < operands_.size(); ++i) {
      if (i > 0) out += ", ";
      out += "%" + operands_[i]->name();
    }
  }
  out += ")";
  auto attr = [&out](std::string_view name, const std::string& value) {
    out += ", ";
    out += name;
    out += "=";
    out += value;
  };
  if (has_dimensions_) attr("dimensions", Braced(dimensions_));
  if (opcode_ == HloOpcode::kSlice) {
    std::string value = "{";
    for (size_t i = 0; i < slice_.size(); ++i) {
      if (i > 0) value += ", ";
      value += "[" + std::to_string(slice_[i].start) + ":" + std::to_string(slice_[i].limit);
      if (slice_[i].stride != 1) value += ":" + std::to_string(slice_[i].stride);
      value += "]";
    }
    attr("slice", value + "}");
  }
  if (opcode_ == HloOpcode::kPad) {
    std::string value;
    for (size_t i = 0; i < padding_.size(); ++i) {
      if (i > 0) value += "x";
      value += std::to_string(padding_[i].low) + "_" + std::to_string(padding_[i].high);
      if (padding_[i].interior != 0) value += "_" + std::to_string(padding_[i].interior);
    }
    attr("padding", value);
  }
  if (opcode_ == HloOpcode::kGetTupleElement) attr("index", std::to_string(tuple_index_));
  if (opcode_ == HloOpcode::kIota) attr("iota_dimension", std::to_string(iota_dimension_));
  if (opcode_ == HloOpcode::kDynamicSlice) {
    attr("dynamic_slice_sizes", Braced(dynamic_slice_sizes_));
  }
  if (direction_.has_value()) attr("direction", ComparisonDirectionString(*direction_));
  const DotDimensionNumbers& dnums = dot_dimension_numbers_;
  if (!dnums.lhs_batch_dimensions.empty()) {
    attr("lhs_batch_dims", Braced(dnums.lhs_batch_dimensions));
  }
  if (!dnums.lhs_contracting_dimensions.empty()) {
    attr("lhs_contracting_dims", Braced(dnums.lhs_contracting_dimensions));
  }
  if (!dnums.rhs_batch_dimensions.empty()) {
    attr("rhs_batch_dims", Braced(dnums.rhs_batch_dimensions));
  }
  if (!dnums.rhs_contracting_dimensions.empty()) {
    attr("rhs_contracting_dims", Braced(dnums.rhs_contracting_dimensions));
  }
  const bool default_precision =
      std::all_of(precision_config_.operand_precision.begin(),
                  precision_config_.operand_precision.end(),
                  [](Precision p) { return p == Precision::kDefault; }) &&
      precision_config_.operand_precision.size() == 2;
  if (!default_precision) {
    std::string value = "{";
    for (size_t i = 0; i < precision_config_.operand_precision.size(); ++i) {
      if (i > 0) value += ",";
      std::string name = PrecisionName(precision_config_.operand_precision[i]);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      value += name;
    }
    attr("operand_precision", value + "}");
  }
  if (precision_config_.algorithm != Algorithm::kUnset) {
    attr("algorithm", LowerAlgorithmName(precision_config_.algorithm));
  }
  if (opcode_ == HloOpcode::kScatter) {
    const ScatterDimensionNumbers& s = scatter_dnums_;
    attr("update_window_dims", Braced(s.update_window_dims));
    attr("inserted_window_dims", Braced(s.inserted_window_dims));
    if (!s.input_batching_dims.empty()) attr("input_batching_dims", Braced(s.input_batching_dims));
    if (!s.scatter_indices_batching_dims.empty()) {
      attr("scatter_indices_batching_dims", Braced(s.scatter_indices_batching_dims));
    }
    attr("scatter_dims_to_operand_dims", Braced(s.scatter_dims_to_operand_dims));
    attr("index_vector_dim", std::to_string(s.index_vector_dim));
    if (indices_are_sorted_) attr("indices_are_sorted", "true");
    if (unique_indices_) attr("unique_indices", "true");
  }
  if (exponent_bits_ >= 0) attr("exponent_bits", std::to_string(exponent_bits_));
  if (mantissa_bits_ >= 0) attr("mantissa_bits", std::to_string(mantissa_bits_));
  for (size_t i = 0; i < called_.size();) {
    size_t j = i;
    while (j < called_.size() && called_[j].attribute == called_[i].attribute) ++j;
    const bool list = j - i > 1 || called_[i].attribute == "branch_computations";
    std::string value = list ? "{" : "";
    for (size_t k = i; k < j; ++k) {
      if (k > i) value += ", ";
      value += "%" + (called_[k].computation ? called_[k].computation->name() : "?");
    }
    attr(called_[i].attribute, list ? value + "}" : value);
    i = j;
  }
  if (opcode_ == HloOpcode::kCustomCall) attr("custom_call_target", Quote(custom_call_target_));
  if (!backend_config_.empty()) {
    attr("backend_config", backend_config_.front() == '{' && backend_config_.back() == '}'
                               ? backend_config_
                               : Quote(backend_config_));
  }
  for (const RawAttribute& raw : raw_attributes_) attr(raw.name, raw.value);
  return out;
}

std::optional<int64_t> PaddedDimensionSize(int64_t size, const PaddingDimension& p) {
  int64_t interior = 0, padded = 0;
  if (p.interior < 0 || size < 0 ||
      __builtin_mul_overflow(std::max<int64_t>(size - 1, 0), p.interior, &interior) ||
      __builtin_add_overflow(size, interior, &padded) ||
      __builtin_add_overflow(padded, p.low, &padded) ||
      __builtin_add_overflow(padded, p.high, &padded) || padded < 0) {
    return std::nullopt;
  }
  return padded;
}

// ---- HloComputation ------------------------------------------------------------------------

bool HloComputation::IsEntry() const {
  return parent_ != nullptr && parent_->entry_computation() == this;
}

std::vector<HloInstruction*> HloComputation::instructions() const {
  std::vector<HloInstruction*> out;
  out.reserve(instructions_.size());
  for (const auto& instruction : instructions_) out.push_back(instruction.get());
  return out;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  // 0: unvisited, 1: on the stack, 2: emitted. Iterative, so long chains cannot overflow the
  // stack; a cycle (only possible through misuse of the mutation API) is broken arbitrarily.
  std::unordered_map<const HloInstruction*, int> state;
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  for (const auto& start : instructions_) {
    if (state[start.get()] != 0) continue;
    stack.push_back({start.get(), 0});
    state[start.get()] = 1;
    while (!stack.empty()) {
      auto& [instruction, next] = stack.back();
      if (next < instruction->operands_.size()) {
        HloInstruction* operand = instruction->operands_[next++];
        if (operand->parent_ == this && state[operand] == 0) {
          state[operand] = 1;
          stack.push_back({operand, 0});
        }
        continue;
      }
      state[instruction] = 2;
      order.push_back(instruction);
      stack.pop_back();
    }
  }
  return order;
}

HloInstruction* HloComputation::parameter_instruction(int64_t i) const {
  if (i < 0 || i >= num_parameters()) return nullptr;
  return parameters_[static_cast<size_t>(i)];
}

HloInstruction* HloComputation::GetInstructionWithName(std::string_view name) const {
  auto it = instructions_by_name_.find(std::string(name));
  return it == instructions_by_name_.end() ? nullptr : it->second;
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  HloInstruction* added = instruction.get();
  added->parent_ = this;
  std::string prefix = added->name_.empty() ? HloOpcodeString(added->opcode()) : added->name_;
  added->name_ = parent_ != nullptr ? parent_->UniqueInstructionName(prefix) : prefix;
  if (added->opcode() == HloOpcode::kParameter && added->parameter_number() >= 0 &&
      added->parameter_number() < (int64_t{1} << 20)) {
    const size_t number = static_cast<size_t>(added->parameter_number());
    if (parameters_.size() <= number) parameters_.resize(number + 1, nullptr);
    if (parameters_[number] == nullptr) parameters_[number] = added;
  }
  instructions_by_name_[added->name_] = added;
  instructions_.push_back(std::move(instruction));
  return added;
}

Status HloComputation::RemoveInstruction(HloInstruction* instruction) {
  if (instruction->user_count() > 0) {
    return InvalidArgument("cannot remove %s: it still has %lld users",
                           instruction->NameForErrors().c_str(),
                           static_cast<long long>(instruction->user_count()));
  }
  if (instruction == root_) {
    return InvalidArgument("cannot remove %s: it is the root of %s",
                           instruction->NameForErrors().c_str(), name_.c_str());
  }
  if (instruction->opcode() == HloOpcode::kParameter) {
    return InvalidArgument("cannot remove parameter %s", instruction->NameForErrors().c_str());
  }
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& owned) { return owned.get() == instruction; });
  if (it == instructions_.end()) {
    return InvalidArgument("cannot remove %s: it is not in %s",
                           instruction->NameForErrors().c_str(), name_.c_str());
  }
  for (HloInstruction* operand : instruction->operands_) operand->RemoveUser(instruction);
  instructions_by_name_.erase(instruction->name_);
  instructions_.erase(it);
  return OkStatus();
}

Status HloComputation::ReplaceInstruction(HloInstruction* old_instruction,
                                          HloInstruction* replacement) {
  FP8_RETURN_IF_ERROR(old_instruction->ReplaceAllUsesWith(replacement));
  return RemoveInstruction(old_instruction);
}

int64_t HloComputation::RemoveDeadCode() {
  std::unordered_set<const HloInstruction*> live;
  std::vector<HloInstruction*> work;
  auto mark = [&](HloInstruction* instruction) {
    if (instruction != nullptr && live.insert(instruction).second) work.push_back(instruction);
  };
  mark(root_);
  for (const auto& instruction : instructions_) {
    if (HasSideEffect(instruction.get())) mark(instruction.get());
  }
  while (!work.empty()) {
    HloInstruction* instruction = work.back();
    work.pop_back();
    for (HloInstruction* operand : instruction->operands_) mark(operand);
  }
  // A dead instruction's users are dead too, so unlinking only touches live operands' lists.
  int64_t removed = 0;
  for (const auto& instruction : instructions_) {
    if (live.count(instruction.get())) continue;
    for (HloInstruction* operand : instruction->operands_) operand->RemoveUser(instruction.get());
    instructions_by_name_.erase(instruction->name_);
    ++removed;
  }
  instructions_.erase(std::remove_if(instructions_.begin(), instructions_.end(),
                                     [&](const auto& owned) { return !live.count(owned.get()); }),
                      instructions_.end());
  return removed;
}

std::string HloComputation::ToString() const {
  std::string out = IsEntry() ? "ENTRY %" : "%";
  out += name_ + " (";
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (i > 0) out += ", ";
    if (parameters_[i] == nullptr) {
      out += "?: ?";
      continue;
    }
    out += parameters_[i]->name() + ": " + parameters_[i]->shape().ToString(false);
  }
  out += ") -> ";
  out += root_ != nullptr ? root_->shape().ToString(false) : "()";
  out += " {\n";
  for (const HloInstruction* instruction : MakeInstructionPostOrder()) {
    out += instruction == root_ ? "  ROOT " : "  ";
    out += instruction->ToString();
    out += "\n";
  }
  return out + "}\n";
}

// ---- HloModule -----------------------------------------------------------------------------

std::vector<HloComputation*> HloModule::computations() const {
  std::vector<HloComputation*> out;
  for (const auto& computation : computations_) out.push_back(computation.get());
  return out;
}

HloComputation* HloModule::GetComputationWithName(std::string_view name) const {
  auto it = computations_by_name_.find(std::string(name));
  return it == computations_by_name_.end() ? nullptr : it->second;
}

HloComputation* HloModule::AddComputation(std::string name) {
  std::string unique = name;
  for (int64_t n = 1; GetComputationWithName(unique) != nullptr; ++n) {
    unique = name + "." + std::to_string(n);
  }
  computations_.push_back(std::unique_ptr<HloComputation>(new HloComputation(unique)));
  computations_.back()->parent_ = this;
  computations_by_name_[unique] = computations_.back().get();
  return computations_.back().get();
}

std::string HloModule::UniqueInstructionName(std::string_view prefix) {
  std::string name(prefix);
  if (taken_names_.count(name) > 0) {
    // "dot.3" -> "dot.4", "dot.5", ...; "dot" -> "dot.1", ...
    std::string base = name;
    int64_t n = 1;
    const size_t dot = base.rfind('.');
    if (dot != std::string::npos && dot + 1 < base.size() &&
        base.find_first_not_of("0123456789", dot + 1) == std::string::npos &&
        base.size() - dot - 1 < 18) {
      n = std::stoll(base.substr(dot + 1)) + 1;
      base = base.substr(0, dot);
    }
    do {
      name = base + "." + std::to_string(n++);
    } while (taken_names_.count(name) > 0);
  }
  taken_names_.insert(name);
  return name;
}

std::string HloModule::ToString() const {
  std::string out = "HloModule " + name_;
  for (const RawAttribute& attribute : header_attributes_) {
    out += ", " + attribute.name + "=" + attribute.value;
  }
  out += "\n";
  for (const auto& computation : computations_) {
    out += "\n";
    out += computation->ToString();
  }
  return out;
}

}  // namespace fp8dot::hlo
