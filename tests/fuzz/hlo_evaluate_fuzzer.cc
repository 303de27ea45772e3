// Asserts: on any small module (every array <= 4096 elements, bounded estimated work) that parses
// and verifies, Fp8GemmRewriter either fails with a Status or leaves a module that still verifies,
// and the HLO interpreter (CPU reference dots) evaluates it on random arguments to a Status or to
// a value whose shape and element count match the entry root's, never crashing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fp8dot/hlo/fp8_gemm_rewriter.h"
#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"
#include "fp8dot/hlo/interpreter.h"
#include "fuzz_util.h"

namespace fp8dot::hlo {
namespace {

constexpr int64_t kMaxArrayElements = 4096;
constexpr int64_t kMaxWork = int64_t{1} << 22;  // element operations, estimated generously
constexpr int64_t kTooMuch = kMaxWork + 1;

// The element count of the largest array in `shape` (tuples recursively), or kTooMuch when one
// exceeds kMaxArrayElements (checked without overflow) or a dimension is negative.
int64_t LargestArray(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t largest = 0;
    for (const Shape& element : shape.tuple_shapes())
      largest = std::max(largest, LargestArray(element));
    return largest;
  }
  int64_t count = 1;
  for (int64_t dim : shape.dimensions()) {
    if (dim < 0) return kTooMuch;
    if (dim == 0) return 0;
    if (dim > kMaxArrayElements || count > kMaxArrayElements / dim) return kTooMuch;
    count *= dim;
  }
  return count;
}

int64_t AddCapped(int64_t a, int64_t b) { return std::min(kTooMuch, a + b); }
int64_t MulCapped(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kTooMuch / b ? kTooMuch : std::min(kTooMuch, a * b);
}

// An upper estimate of the element operations evaluating `computation` takes: each instruction
// costs its largest array, a dot its output times its lhs, and each called computation its own
// cost times 16x the instruction's largest array (reduce, map, sort, scatter call per element).
// kTooMuch for recursion or anything over kMaxWork.
int64_t Work(const HloComputation* computation, std::map<const HloComputation*, int64_t>& memo) {
  auto [it, inserted] = memo.emplace(computation, -1);
  if (!inserted) return it->second < 0 ? kTooMuch : it->second;  // -1: a cycle
  int64_t work = 0;
  for (const HloInstruction* instruction : computation->instructions()) {
    int64_t largest = LargestArray(instruction->shape());
    for (const HloInstruction* operand : instruction->operands()) {
      largest = std::max(largest, operand == nullptr ? 0 : LargestArray(operand->shape()));
    }
    work = AddCapped(work, std::max<int64_t>(1, largest));
    if (instruction->opcode() == HloOpcode::kDot ||
        instruction->opcode() == HloOpcode::kCustomCall) {
      work =
          AddCapped(work, MulCapped(std::max<int64_t>(1, largest), std::max<int64_t>(1, largest)));
    }
    for (const CalledComputation& called : instruction->called_computations()) {
      if (called.computation == nullptr) continue;
      work = AddCapped(
          work, MulCapped(16 * std::max<int64_t>(1, largest), Work(called.computation, memo)));
    }
  }
  memo[computation] = work;
  return work;
}

// Whether `value` is shaped as `shape` says: arrays hold ElementCount() elements in the vector
// their element type uses (and nothing in the other), tuples match element by element.
bool ValueMatches(const Value& value, const Shape& shape) {
  if (shape.IsTuple()) {
    if (!value.IsTuple() || value.elements.size() != shape.tuple_shapes().size()) return false;
    for (size_t i = 0; i < value.elements.size(); ++i) {
      if (!ValueMatches(value.elements[i], shape.tuple_shapes()[i])) return false;
    }
    return true;
  }
  return !value.IsTuple() && Shape::Compatible(value.shape, shape) &&
         value.element_count() == shape.ElementCount() &&
         (value.HoldsIntegers() ? value.values.empty() : value.integers.empty());
}

// FP8DOT_FUZZ_VERBOSE=1: one line per input saying how far it got (to check seeds reach the
// interpreter: ./hlo_evaluate_fuzzer -runs=0 corpus/).
void Note(const char* stage, const Status& status = Status()) {
  static const bool verbose = std::getenv("FP8DOT_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::fprintf(stderr, "hlo_evaluate_fuzzer: %s %s\n", stage, status.ToString().c_str());
}

void Run(std::string_view text) {
  using fuzz::Fail;
  auto parsed = ParseHloModule(text, "fuzz.hlo");
  if (!parsed.ok()) return Note("parse failed", parsed.status());
  HloModule& module = **parsed;
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return;
  std::map<const HloComputation*, int64_t> memo;
  for (const HloComputation* computation : module.computations()) {
    if (Work(computation, memo) > kMaxWork) return Note("skipped: too large");
  }
  if (Status verified = VerifyHloModule(module); !verified.ok()) {
    return Note("verify failed", verified);
  }

  Fp8GemmRewriter rewriter;
  auto changed = rewriter.Run(&module);
  if (!changed.ok()) return Note("rewrite failed", changed.status());
  if (*changed) {
    Status verified = VerifyHloModule(module);
    if (!verified.ok())
      Fail("Fp8GemmRewriter left a module that does not verify",
           verified.ToString() + "\n" + module.ToString());
  }
  entry = module.entry_computation();
  std::vector<Value> arguments;
  for (const HloInstruction* parameter : entry->parameter_instructions()) {
    if (parameter == nullptr) return;
    auto argument = RandomValue(parameter->shape(), 1 + arguments.size());
    if (!argument.ok()) return;
    arguments.push_back(std::move(*argument));
  }
  HloInterpreter interpreter({.dot_backend = Backend::kCpuReference});
  auto result = interpreter.Evaluate(module, arguments);
  if (!result.ok()) return Note("evaluate failed", result.status());
  Note(*changed ? "evaluated (rewritten)" : "evaluated");
  const HloInstruction* root = entry->root_instruction();
  if (root != nullptr && !ValueMatches(*result, root->shape())) {
    Fail("the interpreter's result does not match the root's shape",
         result->ShapeString() + " vs " + root->shape().ToString());
  }
}

}  // namespace
}  // namespace fp8dot::hlo

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fp8dot::hlo::Run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
