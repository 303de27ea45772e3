// Recursive-descent parser for HLO text (include/fp8dot/hlo/hlo_parser.h), in the style of XLA's
// hlo_parser.cc: each Parse* function sits under its grammar rule, returns false after recording
// an error with Error(loc, msg), and only ParseHloModule turns the error into a Status.
//
// The scanner works on characters: whitespace, /*...*/ and // comments are skipped between
// tokens. Attributes the IR types are parsed into fields; every other attribute value is captured
// verbatim (balanced brackets and strings) so that the printer can write it back.
#include "fp8dot/hlo/hlo_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

namespace fp8dot::hlo {
namespace {

constexpr int kMaxNestingDepth = 64;  // tuple shapes, literal braces
constexpr int64_t kMaxParameterNumber = 1 << 20;

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class HloParser {
 public:
  HloParser(std::string_view text, std::string_view filename) : text_(text), filename_(filename) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  StatusOr<std::unique_ptr<HloModule>> ParseModuleText() {
    if (!ParseModule()) return ErrorStatus();
    return std::move(module_);
  }

  StatusOr<Shape> ParseShapeText() {
    Shape shape;
    if (!ParseShape(&shape)) return ErrorStatus();
    SkipSpace();
    if (pos_ != text_.size()) {
      Error(pos_, "expected end of input after the shape");
      return ErrorStatus();
    }
    return shape;
  }

 private:
  // ---- Errors and locations ----------------------------------------------------------------

  Status ErrorStatus() const {
    return Status(StatusCode::kInvalidArgument, error_.empty() ? "parse error" : error_);
  }

  // Records "file:line:col: error: msg", the source line and a caret (first error only).
  bool Error(size_t offset, const std::string& message) {
    if (!error_.empty()) return false;
    offset = std::min(offset, text_.size());
    const size_t line = LineOf(offset);
    const size_t start = line_starts_[line];
    size_t end = text_.find('\n', start);
    if (end == std::string_view::npos) end = text_.size();
    const size_t col = offset - start;
    // Control bytes in the echoed line become '?' (one byte each, so the caret still lines up).
    std::string source(text_.substr(start, end - start));
    for (char& c : source) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
    }
    error_ = std::string(filename_) + ":" + std::to_string(line + 1) + ":" +
             std::to_string(col + 1) + ": error: " + message + "\n" + source + "\n" +
             std::string(col, ' ') + "^";
    return false;
  }
  bool ErrorHere(const std::string& message) {
    SkipSpace();
    return Error(pos_, message);
  }

  size_t LineOf(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return static_cast<size_t>(it - line_starts_.begin()) - 1;
  }

  // What the next token looks like, for "got ..." in messages.
  std::string Describe() {
    SkipSpace();
    if (pos_ >= text_.size()) return "end of input";
    size_t end = pos_;
    if (IsNameChar(text_[end]) || text_[end] == '%') {
      ++end;
      while (end < text_.size() && IsNameChar(text_[end]) && end - pos_ < 40) ++end;
    } else {
      const unsigned char c = static_cast<unsigned char>(text_[end]);
      if (c < 0x20 || c >= 0x7f) return StrFormat("byte 0x%02x", c);
      ++end;
    }
    return "'" + std::string(text_.substr(pos_, end - pos_)) + "'";
  }

  // Depth guard for recursive rules.
  struct DepthGuard {
    explicit DepthGuard(int* depth) : depth_(depth) { ++*depth_; }
    ~DepthGuard() { --*depth_; }
    int* depth_;
  };
  bool CheckDepth() {
    if (depth_ > kMaxNestingDepth) {
      return ErrorHere(StrFormat("nesting deeper than %d levels", kMaxNestingDepth));
    }
    return true;
  }

  // ---- Scanner -------------------------------------------------------------------------------

  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (text_.substr(pos_, 2) == "/*") {
        const size_t end = text_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? text_.size() : end + 2;
      } else if (text_.substr(pos_, 2) == "//") {
        const size_t end = text_.find('\n', pos_);
        pos_ = end == std::string_view::npos ? text_.size() : end;
      } else {
        break;
      }
    }
  }

  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  bool TryConsume(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  bool Expect(std::string_view token, std::string_view context) {
    if (TryConsume(token)) return true;
    return ErrorHere(StrFormat("expected '%.*s' %.*s, got %s", static_cast<int>(token.size()),
                               token.data(), static_cast<int>(context.size()), context.data(),
                               Describe().c_str()));
  }

  // A keyword: the identifier `word` not followed by more name characters.
  bool TryKeyword(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (end < text_.size() && IsNameChar(text_[end])) return false;
    pos_ = end;
    return true;
  }

  bool PeekIdentifier() {
    SkipSpace();
    return pos_ < text_.size() && IsNameStart(text_[pos_]);
  }

  // identifier ::= [a-zA-Z_][a-zA-Z0-9_.-]*
  bool ParseIdentifier(std::string* out, std::string_view what) {
    SkipSpace();
    if (pos_ >= text_.size() || !IsNameStart(text_[pos_])) {
      return Error(pos_, StrFormat("expected %.*s, got %s", static_cast<int>(what.size()),
                                   what.data(), Describe().c_str()));
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    *out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  // name ::= '%'? identifier
  bool ParseName(std::string* out, std::string_view what) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '%') {
      ++pos_;
      if (pos_ >= text_.size() || !IsNameStart(text_[pos_])) {
        return Error(pos_, StrFormat("expected a name after '%%'"));
      }
    }
    return ParseIdentifier(out, what);
  }

  // attribute_name ::= [a-zA-Z_][a-zA-Z0-9_]*
  bool ParseAttributeName(std::string* out) {
    SkipSpace();
    if (pos_ >= text_.size() || !IsNameStart(text_[pos_])) {
      return Error(pos_, "expected an attribute name, got " + Describe());
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && (IsNameStart(text_[pos_]) || IsDigit(text_[pos_]))) ++pos_;
    *out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  // int ::= '-'? [0-9]+
  bool ParseInt64(int64_t* out) {
    SkipSpace();
    const size_t start = pos_;
    size_t end = pos_;
    if (end < text_.size() && text_[end] == '-') ++end;
    if (end >= text_.size() || !IsDigit(text_[end])) {
      return Error(start, "expected an integer, got " + Describe());
    }
    while (end < text_.size() && IsDigit(text_[end])) ++end;
    auto result = std::from_chars(text_.data() + start, text_.data() + end, *out);
    if (result.ec != std::errc() || result.ptr != text_.data() + end) {
      return Error(start, "integer out of range: " + std::string(text_.substr(start, end - start)));
    }
    pos_ = end;
    return true;
  }

  // int_list ::= '{' (int (',' int)*)? '}'
  bool ParseIntList(std::vector<int64_t>* out) {
    out->clear();
    if (!Expect("{", "to start a list of integers")) return false;
    if (TryConsume("}")) return true;
    do {
      int64_t value;
      if (!ParseInt64(&value)) return false;
      out->push_back(value);
    } while (TryConsume(","));
    return Expect("}", "to end the list of integers");
  }

  // string ::= '"' ([^"\\] | '\\' any)* '"'
  bool ParseString(std::string* out) {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '"') {
      return Error(pos_, "expected a string, got " + Describe());
    }
    const size_t start = pos_++;
    out->clear();
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        c = text_[pos_++];
        if (c == 'n') c = '\n';
        if (c == 't') c = '\t';
      }
      *out += c;
    }
    if (pos_ >= text_.size()) return Error(start, "unterminated string");
    ++pos_;
    return true;
  }

  // raw_value ::= characters up to ',' or a closing bracket at nesting level 0 (or a newline),
  // with balanced (), [], {} and strings.
  bool ParseRawValue(std::string* out, std::string_view attribute) {
    SkipSpace();
    const size_t start = pos_;
    std::vector<char> closers;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        std::string ignored;
        if (!ParseString(&ignored)) return false;
        continue;
      }
      if (c == '{' || c == '[' || c == '(') {
        closers.push_back(c == '{' ? '}' : c == '[' ? ']' : ')');
      } else if (c == '}' || c == ']' || c == ')') {
        if (closers.empty()) break;
        if (c != closers.back()) {
          return Error(pos_, StrFormat("unbalanced '%c' in the value of attribute '%.*s'", c,
                                       static_cast<int>(attribute.size()), attribute.data()));
        }
        closers.pop_back();
      } else if (closers.empty() && (c == ',' || c == '\n')) {
        break;
      }
      ++pos_;
    }
    if (!closers.empty()) {
      return Error(start,
                   StrFormat("unterminated value of attribute '%.*s' (missing '%c')",
                             static_cast<int>(attribute.size()), attribute.data(), closers.back()));
    }
    std::string_view value = text_.substr(start, pos_ - start);
    while (!value.empty() &&
           (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) {
      value.remove_suffix(1);
    }
    *out = std::string(value);
    return true;
  }

  // ---- Module and computations --------------------------------------------------------------

  // module ::= 'HloModule' name (',' header_attribute)* computation+
  // header_attribute ::= attribute_name '=' raw_value
  bool ParseModule() {
    if (!TryKeyword("HloModule")) {
      return ErrorHere("expected 'HloModule' at the start of the module, got " + Describe());
    }
    std::string name;
    if (!ParseName(&name, "the module name")) return false;
    module_ = std::make_unique<HloModule>(name);
    while (TryConsume(",")) {
      RawAttribute attribute;
      if (!ParseAttributeName(&attribute.name) || !Expect("=", "after the attribute name") ||
          !ParseRawValue(&attribute.value, attribute.name)) {
        return false;
      }
      module_->mutable_header_attributes()->push_back(std::move(attribute));
    }
    SkipSpace();
    if (pos_ >= text_.size()) return ErrorHere("expected a computation, got end of input");
    // Peek() is '\0' at the end, but the text may contain NUL bytes: test the position.
    while ((SkipSpace(), pos_ < text_.size())) {
      bool skipped = false;
      if (!SkipDebugInfoTable(&skipped)) return false;
      if (!skipped && !ParseComputation()) return false;
    }
    if (module_->computations().empty()) {
      return ErrorHere("expected a computation, got end of input");
    }
    if (module_->entry_computation() == nullptr) {
      module_->set_entry_computation(module_->computations().back());
    }
    return true;
  }

  // XLA's optimized dumps carry source-location tables after the header, which instructions
  // reference by metadata={... stack_frame_id=N}. fp8dot has no use for them: skipped.
  // debug_table ::= ('FileNames' | 'FunctionNames' | 'FileLocations' | 'StackFrames')
  //                 (int (string | '{' raw '}'))+
  bool SkipDebugInfoTable(bool* skipped) {
    *skipped = false;
    const size_t start = (SkipSpace(), pos_);
    for (std::string_view table : {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}) {
      if (!TryKeyword(table)) continue;
      if (!IsDigit(Peek())) {  // a computation that happens to have this name
        pos_ = start;
        return true;
      }
      while (IsDigit(Peek())) {
        int64_t id;
        if (!ParseInt64(&id)) return false;
        std::string entry;
        if (Peek() == '"' ? !ParseString(&entry)
                          : !(Peek() == '{' && ParseRawValue(&entry, std::string(table)))) {
          return ErrorHere(StrFormat("expected a string or {...} after id %lld in the %.*s table",
                                     static_cast<long long>(id), static_cast<int>(table.size()),
                                     table.data()));
        }
      }
      *skipped = true;
      return true;
    }
    return true;
  }

  // computation ::= 'ENTRY'? name signature? '{' instruction+ '}' (',' raw_attribute)*
  // signature ::= '(' (name ':' shape (',' name ':' shape)*)? ')' '->' shape
  bool ParseComputation() {
    const size_t start = (SkipSpace(), pos_);
    const bool is_entry = TryKeyword("ENTRY");
    std::string name;
    const size_t name_pos = (SkipSpace(), pos_);
    if (!ParseName(&name, "a computation name (or ENTRY)")) return false;
    if (module_->GetComputationWithName(name) != nullptr) {
      return Error(name_pos, "computation '" + name + "' is already defined");
    }
    if (is_entry && module_->entry_computation() != nullptr) {
      return Error(start, "the module has more than one ENTRY computation");
    }
    if (TryConsume("(")) {
      if (!TryConsume(")")) {
        do {
          std::string param;
          Shape shape;
          if (!ParseName(&param, "a parameter name") || !Expect(":", "after the parameter name") ||
              !ParseShape(&shape)) {
            return false;
          }
        } while (TryConsume(","));
        if (!Expect(")", "to end the parameter list")) return false;
      }
      Shape result;
      if (!Expect("->", "after the parameter list") || !ParseShape(&result)) return false;
    }
    if (!Expect("{", "to start the body of computation '" + name + "'")) return false;
    HloComputation* computation = module_->AddComputation(name);
    if (is_entry) module_->set_entry_computation(computation);
    names_.clear();
    HloInstruction* root = nullptr;
    HloInstruction* last = nullptr;
    while (!TryConsume("}")) {
      if (Peek() == '\0') return ErrorHere("expected '}' to end computation '" + name + "'");
      if (!ParseInstruction(computation, &root, &last)) return false;
    }
    if (last == nullptr) return Error(name_pos, "computation '" + name + "' has no instructions");
    computation->set_root_instruction(root != nullptr ? root : last);
    for (int64_t i = 0; i < computation->num_parameters(); ++i) {
      if (computation->parameter_instruction(i) == nullptr) {
        return Error(name_pos, StrFormat("computation '%s' has no parameter(%lld)", name.c_str(),
                                         static_cast<long long>(i)));
      }
    }
    // Computation attributes such as execution_thread="..." are accepted and dropped.
    while (TryConsume(",")) {
      std::string attribute, value;
      if (!ParseAttributeName(&attribute) || !Expect("=", "after the attribute name") ||
          !ParseRawValue(&value, attribute)) {
        return false;
      }
    }
    return true;
  }

  // instruction ::= 'ROOT'? name '=' shape opcode operands (',' attribute)*
  bool ParseInstruction(HloComputation* computation, HloInstruction** root, HloInstruction** last) {
    SkipSpace();
    const size_t start = pos_;
    const bool is_root = TryKeyword("ROOT");
    std::string name;
    const size_t name_pos = (SkipSpace(), pos_);
    if (!ParseName(&name, "an instruction name")) return false;
    if (!all_names_.insert(name).second) {
      return Error(name_pos, "instruction name '" + name + "' is already used");
    }
    if (!Expect("=", "after the instruction name")) return false;
    Shape shape;
    if (!ParseShape(&shape)) return false;
    std::string opcode_name;
    const size_t opcode_pos = (SkipSpace(), pos_);
    if (!ParseIdentifier(&opcode_name, "an opcode")) return false;
    StatusOr<HloOpcode> opcode = StringToHloOpcode(opcode_name);
    if (!opcode.ok()) return Error(opcode_pos, opcode.status().message());

    std::unique_ptr<HloInstruction> instruction = HloInstruction::Create(*opcode, shape);
    instruction->set_name(name);
    instruction->set_source_line(static_cast<int>(LineOf(start) + 1));
    if (!ParseOperands(computation, instruction.get())) return false;
    if (!ParseAttributes(instruction.get())) return false;

    if (*opcode == HloOpcode::kParameter) {
      const HloInstruction* existing =
          computation->parameter_instruction(instruction->parameter_number());
      if (existing != nullptr) {
        return Error(opcode_pos, StrFormat("parameter(%lld) is already defined by '%s'",
                                           static_cast<long long>(instruction->parameter_number()),
                                           existing->name().c_str()));
      }
    }
    HloInstruction* added = computation->AddInstruction(std::move(instruction));
    names_[added->name()] = added;
    if (is_root) {
      if (*root != nullptr) {
        return Error(start, "computation '" + computation->name() + "' already has a ROOT ('" +
                                (*root)->name() + "')");
      }
      *root = added;
    }
    *last = added;
    return true;
  }

  // operands ::= '(' (operand (',' operand)*)? ')'
  // operand ::= shape? name
  // parameter ::= '(' int ')'
  // constant ::= '(' shape? literal ')'
  bool ParseOperands(HloComputation* computation, HloInstruction* instruction) {
    if (!Expect("(", StrFormat("after opcode '%s'", HloOpcodeString(instruction->opcode()))))
      return false;
    if (instruction->opcode() == HloOpcode::kParameter) {
      int64_t number;
      const size_t number_pos = (SkipSpace(), pos_);
      if (!ParseInt64(&number)) return false;
      if (number < 0 || number >= kMaxParameterNumber) {
        return Error(number_pos, StrFormat("parameter number %lld is out of range",
                                           static_cast<long long>(number)));
      }
      instruction->set_parameter_number(number);
      return Expect(")", "after the parameter number");
    }
    if (instruction->opcode() == HloOpcode::kConstant) {
      if (!instruction->shape().IsArray()) {
        return ErrorHere("constant must have an array shape, got " +
                         instruction->shape().ToString());
      }
      if (PeekShapeStart()) {  // old form: constant(f32[2] {1, 2})
        Shape ignored;
        if (!ParseShape(&ignored)) return false;
      }
      Literal* literal = instruction->mutable_literal();
      literal->shape = instruction->shape();
      if (!ParseLiteral(literal)) return false;
      return Expect(")", "after the constant's value");
    }
    if (TryConsume(")")) return true;
    do {
      if (PeekShapeStart()) {
        Shape ignored;
        if (!ParseShape(&ignored)) return false;
      }
      std::string operand_name;
      const size_t operand_pos = (SkipSpace(), pos_);
      if (!ParseName(&operand_name, "an operand name")) return false;
      auto it = names_.find(operand_name);
      if (it == names_.end()) {
        return Error(operand_pos, "unknown operand '" + operand_name +
                                      "' (not defined earlier in computation '" +
                                      computation->name() + "')");
      }
      instruction->AppendOperand(it->second);
    } while (TryConsume(","));
    return Expect(")", "to end the operand list");
  }

  // True if a shape starts here: '(' or an element type followed by '['.
  bool PeekShapeStart() {
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    if (text_[pos_] == '(') return true;
    size_t end = pos_;
    while (end < text_.size() && (IsNameStart(text_[end]) || IsDigit(text_[end]))) ++end;
    return end > pos_ && end < text_.size() && text_[end] == '[';
  }

  // attribute ::= attribute_name '=' value
  bool ParseAttributes(HloInstruction* instruction) {
    std::set<std::string> seen;
    while (TryConsume(",")) {
      std::string name;
      const size_t name_pos = (SkipSpace(), pos_);
      if (!ParseAttributeName(&name)) return false;
      if (!seen.insert(name).second) {
        return Error(name_pos, "duplicate attribute '" + name + "'");
      }
      if (!Expect("=", "after attribute name '" + name + "'")) return false;
      if (!ParseAttributeValue(instruction, name)) return false;
    }
    return true;
  }

  bool ParseAttributeValue(HloInstruction* instruction, const std::string& name) {
    const HloOpcode opcode = instruction->opcode();
    DotDimensionNumbers* dnums = instruction->mutable_dot_dimension_numbers();
    ScatterDimensionNumbers* scatter = instruction->mutable_scatter_dimension_numbers();
    if (name == "dimensions") {
      std::vector<int64_t> dims;
      if (!ParseIntList(&dims)) return false;
      instruction->set_dimensions(std::move(dims));
      return true;
    }
    if (name == "lhs_batch_dims") return ParseIntList(&dnums->lhs_batch_dimensions);
    if (name == "rhs_batch_dims") return ParseIntList(&dnums->rhs_batch_dimensions);
    if (name == "lhs_contracting_dims") return ParseIntList(&dnums->lhs_contracting_dimensions);
    if (name == "rhs_contracting_dims") return ParseIntList(&dnums->rhs_contracting_dimensions);
    if (name == "operand_precision") return ParseOperandPrecision(instruction);
    if (name == "algorithm" && opcode == HloOpcode::kDot) return ParseAlgorithmAttr(instruction);
    if (name == "slice" && opcode == HloOpcode::kSlice) return ParseSlice(instruction);
    if (name == "padding" && opcode == HloOpcode::kPad) return ParsePadding(instruction);
    if (name == "direction") {
      std::string text;
      const size_t at = (SkipSpace(), pos_);
      if (!ParseIdentifier(&text, "a comparison direction")) return false;
      StatusOr<ComparisonDirection> direction = ParseComparisonDirection(text);
      if (!direction.ok()) return Error(at, direction.status().message());
      instruction->set_comparison_direction(*direction);
      return true;
    }
    if (name == "index" && opcode == HloOpcode::kGetTupleElement) {
      int64_t index;
      if (!ParseInt64(&index)) return false;
      instruction->set_tuple_index(index);
      return true;
    }
    if (name == "iota_dimension" && opcode == HloOpcode::kIota) {
      int64_t dim;
      if (!ParseInt64(&dim)) return false;
      instruction->set_iota_dimension(dim);
      return true;
    }
    if (name == "dynamic_slice_sizes" && opcode == HloOpcode::kDynamicSlice) {
      return ParseIntList(instruction->mutable_dynamic_slice_sizes());
    }
    if (name == "custom_call_target") {
      std::string target;
      if (!ParseString(&target)) return false;
      instruction->set_custom_call_target(std::move(target));
      return true;
    }
    if (name == "backend_config") {
      std::string config;
      if (Peek() == '"') {
        if (!ParseString(&config)) return false;
      } else if (!ParseRawValue(&config, name)) {
        return false;
      }
      instruction->set_backend_config(std::move(config));
      return true;
    }
    if (name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
        name == "true_computation" || name == "false_computation" ||
        name == "branch_computations") {
      return ParseCalledComputations(instruction, name);
    }
    if (opcode == HloOpcode::kScatter) {
      if (name == "update_window_dims") return ParseIntList(&scatter->update_window_dims);
      if (name == "inserted_window_dims") return ParseIntList(&scatter->inserted_window_dims);
      if (name == "scatter_dims_to_operand_dims") {
        return ParseIntList(&scatter->scatter_dims_to_operand_dims);
      }
      if (name == "input_batching_dims") return ParseIntList(&scatter->input_batching_dims);
      if (name == "scatter_indices_batching_dims") {
        return ParseIntList(&scatter->scatter_indices_batching_dims);
      }
      if (name == "index_vector_dim") return ParseInt64(&scatter->index_vector_dim);
      if (name == "indices_are_sorted" || name == "unique_indices") {
        bool value = false;
        if (!ParseBool(&value)) return false;
        if (name == "indices_are_sorted") instruction->set_indices_are_sorted(value);
        if (name == "unique_indices") instruction->set_unique_indices(value);
        return true;
      }
    }
    if (opcode == HloOpcode::kReducePrecision &&
        (name == "exponent_bits" || name == "mantissa_bits")) {
      int64_t bits;
      if (!ParseInt64(&bits)) return false;
      if (bits < 0) return ErrorHere(name + " must not be negative");
      if (name == "exponent_bits") instruction->set_exponent_bits(bits);
      if (name == "mantissa_bits") instruction->set_mantissa_bits(bits);
      return true;
    }
    RawAttribute raw{name, ""};
    if (!ParseRawValue(&raw.value, name)) return false;
    if (raw.value.empty()) return ErrorHere("expected a value for attribute '" + name + "'");
    instruction->mutable_raw_attributes()->push_back(std::move(raw));
    return true;
  }

  bool ParseBool(bool* out) {
    if (TryKeyword("true")) return *out = true, true;
    if (TryKeyword("false")) return *out = false, true;
    return ErrorHere("expected true or false, got " + Describe());
  }

  // operand_precision ::= '{' precision (',' precision)* '}'
  bool ParseOperandPrecision(HloInstruction* instruction) {
    std::vector<Precision> precisions;
    if (!Expect("{", "to start operand_precision")) return false;
    if (!TryConsume("}")) {
      do {
        std::string text;
        const size_t at = (SkipSpace(), pos_);
        if (!ParseIdentifier(&text, "a precision (default, high, highest)")) return false;
        StatusOr<Precision> precision = ParsePrecision(text);
        if (!precision.ok()) return Error(at, precision.status().message());
        precisions.push_back(*precision);
      } while (TryConsume(","));
      if (!Expect("}", "to end operand_precision")) return false;
    }
    instruction->mutable_precision_config()->operand_precision = std::move(precisions);
    return true;
  }

  // algorithm ::= 'dot_' algorithm_name   (e.g. dot_any_f8_any_f8_f32_fast_accum)
  bool ParseAlgorithmAttr(HloInstruction* instruction) {
    std::string text;
    const size_t at = (SkipSpace(), pos_);
    if (!ParseIdentifier(&text, "an algorithm")) return false;
    std::string_view name = text;
    if (name.rfind("dot_", 0) == 0) name.remove_prefix(4);
    StatusOr<Algorithm> algorithm = ParseAlgorithm(name);
    if (!algorithm.ok()) return Error(at, algorithm.status().message());
    instruction->mutable_precision_config()->algorithm = *algorithm;
    return true;
  }

  // slice ::= '{' ('[' int ':' int (':' int)? ']' (',' ...)*)? '}'
  bool ParseSlice(HloInstruction* instruction) {
    std::vector<SliceDimension>* slice = instruction->mutable_slice();
    slice->clear();
    if (!Expect("{", "to start slice")) return false;
    if (TryConsume("}")) return true;
    do {
      SliceDimension dim;
      if (!Expect("[", "to start a slice dimension") || !ParseInt64(&dim.start) ||
          !Expect(":", "after the slice start") || !ParseInt64(&dim.limit)) {
        return false;
      }
      if (TryConsume(":") && !ParseInt64(&dim.stride)) return false;
      if (!Expect("]", "to end a slice dimension")) return false;
      slice->push_back(dim);
    } while (TryConsume(","));
    return Expect("}", "to end slice");
  }

  // padding ::= (int '_' int ('_' int)?) ('x' int '_' int ('_' int)?)*   (empty for scalars)
  bool ParsePadding(HloInstruction* instruction) {
    const size_t at = (SkipSpace(), pos_);
    std::string text;
    if (!ParseRawValue(&text, "padding")) return false;
    std::vector<PaddingDimension>* padding = instruction->mutable_padding();
    padding->clear();
    if (text.empty()) return true;
    std::stringstream dims(text);
    std::string dim_text;
    while (std::getline(dims, dim_text, 'x')) {
      std::vector<int64_t> parts;
      size_t p = 0;
      while (true) {
        const size_t end = dim_text.find('_', p);
        const std::string part =
            dim_text.substr(p, end == std::string::npos ? std::string::npos : end - p);
        int64_t value;
        auto result = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || result.ec != std::errc() || result.ptr != part.data() + part.size()) {
          return Error(at,
                       "expected padding as low_high[_interior] per dimension, joined by 'x'"
                       " (e.g. 0_0x1_2), got '" +
                           text + "'");
        }
        parts.push_back(value);
        if (end == std::string::npos) break;
        p = end + 1;
      }
      if (parts.size() < 2 || parts.size() > 3) {
        return Error(at,
                     "expected padding as low_high[_interior] per dimension, joined by 'x'"
                     " (e.g. 0_0x1_2), got '" +
                         text + "'");
      }
      padding->push_back({parts[0], parts[1], parts.size() == 3 ? parts[2] : 0});
    }
    return true;
  }

  // called ::= name | '{' (name (',' name)*)? '}'
  bool ParseCalledComputations(HloInstruction* instruction, const std::string& attribute) {
    const bool list = TryConsume("{");
    if (list && TryConsume("}")) return true;
    do {
      std::string name;
      const size_t at = (SkipSpace(), pos_);
      if (!ParseName(&name, "a computation name")) return false;
      HloComputation* computation = module_->GetComputationWithName(name);
      if (computation == nullptr) {
        return Error(at, "unknown computation '" + name +
                             "' (computations must be defined "
                             "before they are called)");
      }
      instruction->AddCalledComputation(attribute, computation);
    } while (list && TryConsume(","));
    return !list || Expect("}", "to end the list of computations");
  }

  // ---- Shapes ----------------------------------------------------------------------------------

  // shape ::= tuple_shape | array_shape
  // tuple_shape ::= '(' (shape (',' shape)*)? ')'
  // array_shape ::= element_type '[' (int (',' int)*)? ']' layout?
  // layout ::= '{' (int (',' int)*)? (':' raw)? '}'
  bool ParseShape(Shape* shape) {
    DepthGuard guard(&depth_);
    if (!CheckDepth()) return false;
    if (TryConsume("(")) {
      std::vector<Shape> elements;
      if (!TryConsume(")")) {
        do {
          Shape element;
          if (!ParseShape(&element)) return false;
          elements.push_back(std::move(element));
        } while (TryConsume(","));
        if (!Expect(")", "to end the tuple shape")) return false;
      }
      *shape = Shape::MakeTuple(std::move(elements));
      return true;
    }
    std::string type_name;
    const size_t at = (SkipSpace(), pos_);
    if (!PeekIdentifier()) return ErrorHere("expected a shape (e.g. f32[2,3]), got " + Describe());
    while (pos_ < text_.size() && (IsNameStart(text_[pos_]) || IsDigit(text_[pos_]))) ++pos_;
    type_name = std::string(text_.substr(at, pos_ - at));
    StatusOr<PrimitiveType> type = ParsePrimitiveType(type_name);
    if (!type.ok()) return Error(at, type.status().message());
    if (pos_ >= text_.size() || text_[pos_] != '[') {
      return Error(pos_, "expected '[' after element type '" + type_name + "'");
    }
    ++pos_;
    std::vector<int64_t> dims;
    if (!TryConsume("]")) {
      do {
        int64_t dim;
        const size_t dim_pos = (SkipSpace(), pos_);
        if (Peek() == '<' || Peek() == '?') {
          return Error(dim_pos, "dynamic dimensions are not supported");
        }
        if (!ParseInt64(&dim)) return false;
        if (dim < 0) return Error(dim_pos, "dimension size must not be negative");
        dims.push_back(dim);
      } while (TryConsume(","));
      if (!Expect("]", "to end the dimensions")) return false;
    }
    const int64_t rank = static_cast<int64_t>(dims.size());
    *shape = Shape::MakeArray(*type, std::move(dims));
    if (!PeekLayoutStart()) return true;
    const size_t layout_pos = pos_;
    ++pos_;  // '{'
    std::vector<int64_t> minor_to_major;
    if (Peek() != '}' && Peek() != ':') {
      do {
        int64_t d;
        if (!ParseInt64(&d)) return false;
        minor_to_major.push_back(d);
      } while (TryConsume(","));
    }
    std::string suffix;
    if (TryConsume(":")) {
      if (!ParseRawValue(&suffix, "layout")) return false;
      if (suffix.empty()) return ErrorHere("expected layout attributes after ':'");
    }
    if (!Expect("}", "to end the layout")) return false;
    std::vector<bool> used(static_cast<size_t>(rank), false);
    bool permutation = static_cast<int64_t>(minor_to_major.size()) == rank;
    for (int64_t d : minor_to_major) {
      if (d < 0 || d >= rank || used[static_cast<size_t>(d)]) {
        permutation = false;
        break;
      }
      used[static_cast<size_t>(d)] = true;
    }
    if (!permutation && !(rank > 0 && minor_to_major.empty() && !suffix.empty())) {
      return Error(layout_pos, StrFormat("layout must be a permutation of 0..%lld",
                                         static_cast<long long>(rank - 1)));
    }
    if (!minor_to_major.empty() || rank == 0) shape->set_minor_to_major(std::move(minor_to_major));
    shape->set_layout_suffix(std::move(suffix));
    return true;
  }

  // A layout is '{' followed by an integer, '}' or ':' (a computation body follows a signature's
  // result shape with '{' and an instruction name).
  bool PeekLayoutStart() {
    size_t p = pos_;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    if (p >= text_.size() || text_[p] != '{') return false;
    const size_t brace = p++;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    if (p >= text_.size()) return false;
    const char c = text_[p];
    if (!(IsDigit(c) || c == '}' || c == ':')) return false;
    pos_ = brace;
    return true;
  }

  // ---- Literals --------------------------------------------------------------------------------

  // literal ::= scalar | nested   (nested braces to the shape's rank)
  bool ParseLiteral(Literal* literal) {
    literal->values.clear();
    literal->integers.clear();
    if (literal->shape.rank() == 0) return ParseScalar(literal);
    if (text_.substr((SkipSpace(), pos_), 5) == "{...}") {
      return ErrorHere(
          "elided constant '{...}' has no values (print the module with "
          "print_large_constants=true)");
    }
    return ParseNestedLiteral(literal, 0);
  }

  // nested ::= '{' (element (',' element)*)? '}', element = nested or scalar at the last dim
  bool ParseNestedLiteral(Literal* literal, int64_t dim) {
    DepthGuard guard(&depth_);
    if (!CheckDepth()) return false;
    const size_t start = (SkipSpace(), pos_);
    if (!Expect("{", "to start a literal")) return false;
    const int64_t expected = literal->shape.dimensions(dim);
    const bool innermost = dim + 1 == literal->shape.rank();
    int64_t count = 0;
    if (!TryConsume("}")) {
      do {
        if (count >= expected) {
          return ErrorHere(
              StrFormat("too many elements in dimension %lld of the literal "
                        "(expected %lld)",
                        static_cast<long long>(dim), static_cast<long long>(expected)));
        }
        if (innermost) {
          if (!ParseScalar(literal)) return false;
        } else if (!ParseNestedLiteral(literal, dim + 1)) {
          return false;
        }
        ++count;
      } while (TryConsume(","));
      if (!Expect("}", "to end the literal")) return false;
    }
    if (count != expected) {
      return Error(start, StrFormat("expected %lld elements in dimension %lld of the literal, "
                                    "got %lld",
                                    static_cast<long long>(expected), static_cast<long long>(dim),
                                    static_cast<long long>(count)));
    }
    return true;
  }

  // scalar ::= number | 'inf' | '-inf' | 'nan' | '-nan' ('(' hex ')')? | 'true' | 'false'
  // Appends the element to `literal`. Integer digits are read exactly (all of s64's and u64's
  // range); everything else is read as a double.
  bool ParseScalar(Literal* literal) {
    const PrimitiveType type = literal->shape.element_type();
    SkipSpace();
    const size_t start = pos_;
    if (TryKeyword("true")) return AppendScalar(literal, start, 1);
    if (TryKeyword("false")) return AppendScalar(literal, start, 0);
    bool negative = false;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) {
      negative = text_[pos_] == '-';
      ++pos_;
    }
    if (TryKeyword("inf")) {
      return AppendScalar(literal, start,
                          negative ? -std::numeric_limits<double>::infinity()
                                   : std::numeric_limits<double>::infinity());
    }
    if (TryKeyword("nan")) {
      if (pos_ < text_.size() && text_[pos_] == '(') {  // nan(0x7fc00000): payload ignored
        const size_t close = text_.find(')', pos_);
        if (close == std::string_view::npos) return Error(pos_, "unterminated NaN payload");
        pos_ = close + 1;
      }
      return AppendScalar(literal, start,
                          negative ? -std::numeric_limits<double>::quiet_NaN()
                                   : std::numeric_limits<double>::quiet_NaN());
    }
    size_t end = pos_;
    while (end < text_.size() &&
           (IsDigit(text_[end]) || text_[end] == '.' || text_[end] == 'e' || text_[end] == 'E' ||
            ((text_[end] == '-' || text_[end] == '+') && end > pos_ &&
             (text_[end - 1] == 'e' || text_[end - 1] == 'E')))) {
      ++end;
    }
    double magnitude = 0;
    auto result = std::from_chars(text_.data() + pos_, text_.data() + end, magnitude);
    if (end == pos_ || result.ec != std::errc() || result.ptr != text_.data() + end) {
      pos_ = start;
      return Error(start, StrFormat("expected a %s literal value, got %s", PrimitiveTypeName(type),
                                    Describe().c_str()));
    }
    if (IsIntegralType(type)) return ParseInteger(literal, start, negative, end, magnitude);
    pos_ = end;
    return AppendScalar(literal, start, negative ? -magnitude : magnitude);
  }

  // Appends `value` (read at `at`) to `literal` once it is valid for the element type.
  bool AppendScalar(Literal* literal, size_t at, double value) {
    const PrimitiveType type = literal->shape.element_type();
    if (!CheckScalarType(type, at, value)) return false;
    if (IsPredOrIntegralType(type)) {
      literal->integers.push_back(IntegerFromDouble(value, type));  // integral and in range
    } else {
      literal->values.push_back(value);
    }
    return true;
  }

  // The range of an integer type: [-2^(w-1), 2^(w-1)-1] or [0, 2^w-1], as text.
  static std::string IntegerRangeText(PrimitiveType type) {
    const int width = PrimitiveTypeByteSize(type) * 8;
    if (IsSignedIntegralType(type)) {
      const uint64_t half = uint64_t{1} << (width - 1);
      return StrFormat("[-%llu, %llu]", static_cast<unsigned long long>(half),
                       static_cast<unsigned long long>(half - 1));
    }
    const uint64_t max = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    return StrFormat("[0, %llu]", static_cast<unsigned long long>(max));
  }

  // The number [pos_, end) of an integer literal (after an optional sign at `start`), read
  // exactly over the type's whole range: digits, as XLA writes them, or a decimal with '.' or an
  // exponent that means an integer ("4.5e15"). Out of the type's range is an error, as in XLA.
  // `approximate` (the number read as a double) only names a decimal in the error.
  bool ParseInteger(Literal* literal, size_t start, bool negative, size_t end, double approximate) {
    const PrimitiveType type = literal->shape.element_type();
    const int width = PrimitiveTypeByteSize(type) * 8;
    const bool is_signed = IsSignedIntegralType(type);
    const uint64_t max_positive = is_signed     ? (uint64_t{1} << (width - 1)) - 1
                                  : width == 64 ? ~uint64_t{0}
                                                : (uint64_t{1} << width) - 1;
    const uint64_t max_negative = is_signed ? uint64_t{1} << (width - 1) : 0;
    const std::string_view number = text_.substr(pos_, end - pos_);
    bool overflow = false;
    const std::optional<uint64_t> magnitude = DecimalToInteger(number, &overflow);
    if (!magnitude.has_value() && !overflow) {
      return Error(start, StrFormat("%s literal must be an integer", PrimitiveTypeName(type)));
    }
    if (overflow || *magnitude > (negative ? max_negative : max_positive)) {
      const bool digits = std::all_of(number.begin(), number.end(), IsDigit);
      const std::string token = digits ? std::string(text_.substr(start, end - start))
                                       : StrFormat("%g", negative ? -approximate : approximate);
      return Error(start, StrFormat("%s literal %s is out of range %s", PrimitiveTypeName(type),
                                    token.c_str(), IntegerRangeText(type).c_str()));
    }
    pos_ = end;
    // Two's complement: 0 - magnitude is the negative value's bits.
    literal->integers.push_back(WrapToIntegerType(negative ? 0 - *magnitude : *magnitude, type));
    return true;
  }

  // The unsigned integer that `number` (digits, then optionally '.' digits and an exponent
  // e[+-]digits, as from_chars accepted them) means, exactly; nullopt when it has a fraction, or
  // with `*overflow` set when it is 2^64 or more.
  static std::optional<uint64_t> DecimalToInteger(std::string_view number, bool* overflow) {
    *overflow = false;
    const size_t e = number.find_first_of("eE");
    int64_t exponent = 0;
    if (e != std::string_view::npos) {
      std::string_view text = number.substr(e + 1);
      const bool minus = !text.empty() && text[0] == '-';
      if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
      // Clamped (a failed parse is a huge exponent): 2^30 is far beyond any uint64 or fraction.
      constexpr int64_t kFar = int64_t{1} << 30;
      if (std::from_chars(text.data(), text.data() + text.size(), exponent).ec != std::errc()) {
        exponent = kFar;
      }
      exponent = std::clamp(minus ? -exponent : exponent, -kFar, kFar);
      number = number.substr(0, e);
    }
    if (const size_t point = number.find('.'); point != std::string_view::npos) {
      exponent -= static_cast<int64_t>(number.size() - point - 1);  // the fraction's digits
    }
    std::string digits;  // the significant digits: the value is digits * 10^exponent
    for (char c : number) {
      if (c != '.' && !(digits.empty() && c == '0')) digits += c;  // leading zeros dropped
    }
    if (digits.empty()) return 0;
    while (exponent < 0 && digits.back() == '0') {
      digits.pop_back();
      ++exponent;
    }
    if (exponent < 0) return std::nullopt;                      // a fraction is left
    if (static_cast<int64_t>(digits.size()) + exponent > 20) {  // 2^64 has 20 digits
      *overflow = true;
      return std::nullopt;
    }
    digits.append(static_cast<size_t>(exponent), '0');
    uint64_t value = 0;
    if (std::from_chars(digits.data(), digits.data() + digits.size(), value).ec != std::errc()) {
      *overflow = true;
      return std::nullopt;
    }
    return value;
  }

  bool CheckScalarType(PrimitiveType type, size_t at, double value) {
    if (type == PrimitiveType::kPred && value != 0 && value != 1) {
      return Error(at, "pred literal must be true, false, 0 or 1");
    }
    // Numbers for integer types are read by ParseInteger; what reaches here is inf, nan, true
    // or false.
    if (IsIntegralType(type) && (!std::isfinite(value) || value != std::floor(value))) {
      return Error(at, StrFormat("%s literal must be an integer", PrimitiveTypeName(type)));
    }
    if (!IsIntegralType(type) && !IsFloatingPointType(type) && type != PrimitiveType::kPred) {
      return Error(at, StrFormat("%s has no literal values", PrimitiveTypeName(type)));
    }
    return true;
  }

  std::string_view text_;
  std::string_view filename_;
  std::vector<size_t> line_starts_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
  std::unique_ptr<HloModule> module_;
  std::unordered_map<std::string, HloInstruction*> names_;  // current computation
  std::set<std::string> all_names_;                         // whole module
};

}  // namespace

StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view filename) {
  HloParser parser(text, filename);
  return parser.ParseModuleText();
}

StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFound("cannot read HLO file '%s'", path.c_str());
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  return ParseHloModule(text, path);
}

StatusOr<Shape> ParseShape(std::string_view text) {
  HloParser parser(text, "<shape>");
  return parser.ParseShapeText();
}

}  // namespace fp8dot::hlo
