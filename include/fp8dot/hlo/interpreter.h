// HloInterpreter: evaluates an HloModule's entry computation on the host, op by op.
//
// Usage:
//
//   FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModuleFile("m.hlo"));
//   HloInterpreter interpreter({.dot_backend = Backend::kCpuEmulation});
//   std::vector<Value> arguments = ...;   // one per entry parameter (RandomValue, npy, ...)
//   FP8_ASSIGN_OR_RETURN(Value result, interpreter.Evaluate(*module, arguments));
//   for (const GemmRecord& gemm : interpreter.gemm_records()) ...  // what each dot/GEMM ran as
//
// Every op except dot and the GEMM custom calls runs on the host: floats in doubles, rounded to
// the element type after each op, pred and integers exactly in 64-bit two's complement, wrapped to
// their width (interpreter_value.h). dot, __cublas$lt$matmul$f8 and
// __cublas$lt$matmul become a DotSpec (operand types, dimension numbers, the PrecisionConfig,
// output type; for the custom calls also tensor scales, alpha, beta + C, epilogue, scale_d, amax)
// and run on the chosen dot backend, so the accumulation is the one ResolveAccumulation picks:
//
//   kCpuEmulation  EmulatedDot: models the resolved accumulation (FP8 fast accumulation, TF32,
//                  ...) as Hopper performs it. The default: faithful, slow.
//   kCpuBlas       BlasDot: f32 accumulation whatever the mode. Fast.
//   kCpuReference  ReferenceDot: exact products, f64 sums.
//   kCuda          CudaDot: the GEMMs run on the GPU (cuBLASLt), copied in and out per GEMM;
//                  every other op still runs on the host. Without a GPU a GEMM fails with the
//                  backend's UNAVAILABLE error. GemmRecord::device_milliseconds has each GEMM's
//                  device time.
//
// An op the interpreter cannot run is an UNIMPLEMENTED error naming the op and its instruction
// ("%gather.3 (line 12): gather is not supported by the interpreter").
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fp8dot/dot_arguments.h"
#include "fp8dot/hlo/hlo_ir.h"
#include "fp8dot/hlo/interpreter_value.h"
#include "fp8dot/run_dot.h"
#include "fp8dot/status.h"

namespace fp8dot::hlo {

struct InterpreterOptions {
  Backend dot_backend = Backend::kCpuEmulation;  // where dots and GEMM custom calls run (RunDot)
  RunDotOptions dot_options;

  // Resource limits. A module that needs more fails with RESOURCE_EXHAUSTED naming the limit and
  // this option, before the interpreter allocates or evaluates any further. The defaults keep a
  // laptop safe; raise them for bigger modules.
  //
  // The most elements of any one array value (an instruction's result, each element of a tuple
  // separately). Elements take 8 bytes (double or int64): 2^28 elements are 2 GiB.
  int64_t max_elements = kDefaultMaxElements;  // 2^28
  // The most instructions one Evaluate() evaluates, counting every instruction of every called
  // computation each time it runs (reduce and scatter bodies per element, unless the body is a
  // single binary op, which runs without a call). Stops modules whose computations call each other
  // exponentially many times. `fp8dot run --max-evaluation-steps`.
  int64_t max_evaluation_steps = 100'000'000;
};

// One dot or GEMM custom call the interpreter ran.
struct GemmRecord {
  std::string instruction;  // NameForErrors() of the dot / custom call
  std::string problem;      // "f8e4m3fn[16,32]{1,0} x f8e4m3fn[32,64]{1,0} -> bf16"
  AccumulationMode accumulation = AccumulationMode::kF32;
  double device_milliseconds = -1;  // the GPU's device time (cuda); -1 for the CPU backends
};

class HloInterpreter {
 public:
  explicit HloInterpreter(InterpreterOptions options = {}) : options_(std::move(options)) {}

  // Verifies the module (VerifyHloModule), then evaluates the entry computation. `arguments`
  // must match the entry parameters in number, element type and dims (layouts are ignored).
  // Returns the root's value (a tuple for a tuple root). Any module gives a value or a Status:
  // one that fails the verifier is refused with the verifier's error.
  StatusOr<Value> Evaluate(const HloModule& module, const std::vector<Value>& arguments);
  // Evaluates any computation (to_apply bodies, called computations) with these parameters. A call
  // from outside the interpreter verifies the computation's module first, as Evaluate does.
  StatusOr<Value> EvaluateComputation(const HloComputation& computation,
                                      const std::vector<Value>& arguments);

  // Every dot and GEMM custom call run since construction, in execution order.
  const std::vector<GemmRecord>& gemm_records() const { return gemm_records_; }

  // Runs one DotSpec on the chosen backend and records it under `instruction`.
  StatusOr<DotResult> RunDot(const HloInstruction& instruction, const DotSpec& spec,
                             const DotArguments& arguments);

 private:
  StatusOr<Value> EvaluateInstruction(const HloInstruction& instruction,
                                      const std::vector<const Value*>& operands,
                                      const std::vector<Value>& parameters);
  // Counts one evaluation step for `instruction` and checks its result against max_elements.
  Status CheckLimits(const HloInstruction& instruction);
  Status CheckElementLimit(const HloInstruction& instruction, const Shape& shape);

  InterpreterOptions options_;
  std::vector<GemmRecord> gemm_records_;
  int call_depth_ = 0;
  bool verified_ = false;  // inside Evaluate(), which has verified the module
  int64_t steps_ = 0;  // instructions evaluated since the outermost Evaluate/EvaluateComputation
};

}  // namespace fp8dot::hlo
