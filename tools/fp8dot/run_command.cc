// fp8dot run: parse + verify an HLO module, fuse its FP8 GEMMs (Fp8GemmRewriter), evaluate it with
// the HLO interpreter on random or .npy inputs, and print each output's shape, dtype and checksum.
// --compare also evaluates the unrewritten module and prints the error between the two.
//
// The executor: dots and GEMM custom calls run on the chosen dot backend (cpu emulation/blas/
// reference, or cuda = cuBLASLt on the GPU); every other op runs on the host interpreter.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backend_runner.h"
#include "commands.h"
#include "fp8dot/arithmetic.h"
#include "fp8dot/error_metrics.h"
#include "fp8dot/file_writer.h"
#include "fp8dot/hlo/convert_round_trip_remover.h"
#include "fp8dot/hlo/device_executor.h"
#include "fp8dot/hlo/fp8_gemm_rewriter.h"
#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"
#include "fp8dot/hlo/interpreter.h"
#include "fp8dot/npy.h"

namespace fp8dot::cli {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloModule;
using hlo::Value;

struct RunCommandFlags {
  std::string module_path;
  BackendFlags backend{.backend = "cpu"};
  std::vector<std::string> inputs;
  uint64_t seed = 1;
  std::string outputs_dir;
  bool compare = false;
  bool no_rewrite = false;
  bool xla_excess_precision = false;
  int repeat = 1;
  bool device_resident = false;
  int64_t max_evaluation_steps = hlo::InterpreterOptions{}.max_evaluation_steps;
};

// Parses and verifies; with --xla-excess-precision also drops convert round trips as XLA does.
StatusOr<std::unique_ptr<HloModule>> LoadModule(const RunCommandFlags& flags) {
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                       hlo::ParseHloModuleFile(flags.module_path));
  FP8_RETURN_IF_ERROR(hlo::VerifyHloModule(*module));
  if (flags.xla_excess_precision) {
    FP8_ASSIGN_OR_RETURN(int64_t removed, hlo::RemoveConvertRoundTrips(module.get()));
    FP8_RETURN_IF_ERROR(hlo::VerifyHloModule(*module));
    std::printf("excess:       %lld convert round trip(s) removed (--xla-excess-precision)\n",
                static_cast<long long>(removed));
  }
  return module;
}

// One argument per entry parameter: the --inputs .npy files in order, or random values.
StatusOr<std::vector<Value>> MakeArguments(const HloComputation& entry,
                                           const RunCommandFlags& flags) {
  std::vector<Value> arguments;
  const int64_t count = entry.num_parameters();
  if (!flags.inputs.empty() && static_cast<int64_t>(flags.inputs.size()) != count) {
    return InvalidArgument("--inputs: %s takes %lld parameters, got %zu files",
                           entry.name().c_str(), static_cast<long long>(count),
                           flags.inputs.size());
  }
  for (int64_t i = 0; i < count; ++i) {
    const HloInstruction* parameter = entry.parameter_instruction(i);
    if (parameter == nullptr)
      return InvalidArgument("%s has no parameter(%lld)", entry.name().c_str(),
                             static_cast<long long>(i));
    const hlo::Shape& shape = parameter->shape();
    if (flags.inputs.empty()) {
      FP8_ASSIGN_OR_RETURN(
          Value value, hlo::RandomValue(shape, flags.seed * 1000003 + static_cast<uint64_t>(i)));
      arguments.push_back(std::move(value));
      continue;
    }
    const std::string& path = flags.inputs[static_cast<size_t>(i)];
    if (!shape.IsArray()) {
      return InvalidArgument(
          "--inputs: parameter %lld (%s) is the tuple %s; .npy inputs feed "
          "array parameters only",
          static_cast<long long>(i), parameter->NameForErrors().c_str(), shape.ToString().c_str());
    }
    const std::string what =
        StrFormat("--inputs %s for parameter %lld (%s)", path.c_str(), static_cast<long long>(i),
                  parameter->NameForErrors().c_str());
    StatusOr<HostTensor> tensor = ReadNpy(path, hlo::ToDType(shape.element_type()));
    if (!tensor.ok()) {
      return Status(tensor.status().code(), what + ": " + tensor.status().message());
    }
    StatusOr<Value> value = hlo::ValueFromHostTensor(*tensor, shape, what);
    if (!value.ok()) return value.status();
    arguments.push_back(std::move(*value));
  }
  return arguments;
}

// The arrays of a result, tuples flattened in order.
void Flatten(const Value& value, std::vector<Value>* outputs) {
  if (!value.IsTuple()) {
    outputs->push_back(value);
    return;
  }
  for (const Value& element : value.elements) Flatten(element, outputs);
}

uint64_t Fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (uint8_t byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

// numpy's descr for pred and integer types (npy.h names the float types).
const char* NumpyIntegerDescr(hlo::PrimitiveType type) {
  switch (type) {
    case hlo::PrimitiveType::kPred:
      return "'|b1'";
    case hlo::PrimitiveType::kS8:
      return "'|i1'";
    case hlo::PrimitiveType::kS16:
      return "'<i2'";
    case hlo::PrimitiveType::kS32:
      return "'<i4'";
    case hlo::PrimitiveType::kS64:
      return "'<i8'";
    case hlo::PrimitiveType::kU8:
      return "'|u1'";
    case hlo::PrimitiveType::kU16:
      return "'<u2'";
    case hlo::PrimitiveType::kU32:
      return "'<u4'";
    case hlo::PrimitiveType::kU64:
      return "'<u8'";
    default:
      return nullptr;
  }
}

// The .npy bytes of one output: fp8dot's descr for float types, numpy's for pred and integers.
StatusOr<std::string> SerializeValueNpy(const std::string& path, const Value& value) {
  if (hlo::ToDType(value.shape.element_type()).has_value()) {
    FP8_ASSIGN_OR_RETURN(HostTensor tensor, hlo::ValueToHostTensor(value, path));
    return SerializeNpy(tensor);
  }
  const char* descr = NumpyIntegerDescr(value.shape.element_type());
  if (descr == nullptr) {
    return InvalidArgument("%s: cannot write %s as .npy", path.c_str(),
                           value.ShapeString().c_str());
  }
  const std::vector<uint8_t> data = hlo::EncodeValueBytes(value);
  return SerializeNpyRaw(descr, value.shape.dimensions(),
                         std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
}

int64_t CountGemmCustomCalls(const HloModule& module) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == hlo::HloOpcode::kCustomCall &&
          instruction->custom_call_target() == hlo::kCublasLtMatmulF8Target) {
        ++count;
      }
    }
  }
  return count;
}

// One line per GEMM of the module: the first run's numbers, and with repeats the warm median
// device time of that GEMM over the later runs.
void PrintGemmTimes(const hlo::HloInterpreter& interpreter, int repeat, const char* label) {
  const std::vector<hlo::GemmRecord>& records = interpreter.gemm_records();
  const size_t per_run = records.size() / static_cast<size_t>(repeat);
  for (size_t g = 0; g < per_run; ++g) {
    const hlo::GemmRecord& gemm = records[g];
    std::printf("%-14s%s: %s, accumulation %s", label, gemm.instruction.c_str(),
                gemm.problem.c_str(), AccumulationModeName(gemm.accumulation));
    if (gemm.device_milliseconds >= 0) {
      std::printf(", device %.3f ms", gemm.device_milliseconds);
      std::vector<double> warm;
      for (size_t r = 1; r < static_cast<size_t>(repeat); ++r) {
        warm.push_back(records[r * per_run + g].device_milliseconds);
      }
      if (!warm.empty()) std::printf(", warm median %.3f ms", Median(warm));
    }
    std::printf("\n");
  }
}

// Loads the module and, unless --no-rewrite, fuses its FP8 GEMMs; prints what the rewrite did.
StatusOr<std::unique_ptr<HloModule>> LoadAndRewrite(const RunCommandFlags& flags) {
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LoadModule(flags));
  std::printf("module:       %s (%s)\n", module->name().c_str(), flags.module_path.c_str());
  if (flags.no_rewrite) {
    std::printf("rewrite:      skipped (--no-rewrite)\n");
    return module;
  }
  hlo::Fp8GemmRewriter rewriter;
  FP8_ASSIGN_OR_RETURN(bool changed, rewriter.Run(module.get()));
  FP8_RETURN_IF_ERROR(hlo::VerifyHloModule(*module));
  std::printf("rewrite:      %s, %lld %s custom call(s)\n", changed ? "changed" : "unchanged",
              static_cast<long long>(CountGemmCustomCalls(*module)), hlo::kCublasLtMatmulF8Target);
  for (const std::string& miss : rewriter.near_misses()) {
    std::printf("not fused:    %s\n", miss.c_str());
  }
  return module;
}

// Evaluates the module flags.repeat times (on the GPU alone with --device-resident); prints the
// first run's time and, with repeats, the warm median. Returns the last run's result.
StatusOr<Value> Evaluate(const HloModule& module, const std::vector<Value>& arguments,
                         Backend backend, const RunCommandFlags& flags) {
  // The first evaluation pays for plan creation and kernel loading; with --repeat the warm ones
  // are reported separately (median).
  std::vector<double> evaluation_ms;
  Value result;
  if (flags.device_resident) {
    FP8_ASSIGN_OR_RETURN(std::unique_ptr<hlo::DeviceGemmExecutor> executor,
                         hlo::DeviceGemmExecutor::Prepare(module, arguments));
    for (int run = 0; run < flags.repeat; ++run) {
      FP8_ASSIGN_OR_RETURN(double milliseconds, executor->Run());
      evaluation_ms.push_back(milliseconds);
    }
    FP8_ASSIGN_OR_RETURN(result, executor->Result());
    std::printf("device:       %lld GEMM(s), inputs uploaded once, every array on the GPU\n",
                static_cast<long long>(executor->gemm_count()));
    std::printf("time:         %.3f ms (device time of the whole module)", evaluation_ms[0]);
  } else {
    hlo::HloInterpreter interpreter(
        {.dot_backend = backend, .max_evaluation_steps = flags.max_evaluation_steps});
    for (int run = 0; run < flags.repeat; ++run) {
      const auto start = std::chrono::steady_clock::now();
      FP8_ASSIGN_OR_RETURN(result, interpreter.Evaluate(module, arguments));
      evaluation_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    PrintGemmTimes(interpreter, flags.repeat, "gemm:");
    std::printf("time:         %.3f ms (evaluation, parsing excluded)", evaluation_ms[0]);
  }
  if (flags.repeat > 1) {
    std::printf(", warm median %.3f ms over %d runs",
                Median({evaluation_ms.begin() + 1, evaluation_ms.end()}), flags.repeat - 1);
  }
  std::printf("\n");
  return result;
}

// One line per output (shape, dtype, checksums); with --outputs also DIR/outN.npy.
Status ReportOutputs(const std::vector<Value>& outputs, const RunCommandFlags& flags) {
  if (!flags.outputs_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(flags.outputs_dir, error);
    if (error) {
      return InvalidArgument("--outputs: cannot create %s: %s", flags.outputs_dir.c_str(),
                             error.message().c_str());
    }
  }
  // All files or none: a failed write removes the outputs already written.
  FileSetWriter files;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& output = outputs[i];
    double sum = 0, abs_sum = 0;  // of the elements as doubles; the hash is of the exact bytes
    for (double v : output.AsDoubles()) {
      sum += v;
      abs_sum += std::fabs(v);
    }
    const std::string label = "out" + std::to_string(i) + ":";
    std::printf("%-14s%s dtype=%s sum=%.10g abs_sum=%.10g hash=%016llx\n", label.c_str(),
                output.shape.ToString(false).c_str(),
                hlo::PrimitiveTypeName(output.shape.element_type()), sum, abs_sum,
                static_cast<unsigned long long>(Fnv1a(hlo::EncodeValueBytes(output))));
    if (!flags.outputs_dir.empty()) {
      const std::string path =
          (std::filesystem::path(flags.outputs_dir) / ("out" + std::to_string(i) + ".npy"))
              .string();
      FP8_ASSIGN_OR_RETURN(std::string bytes, SerializeValueNpy(path, output));
      FP8_RETURN_IF_ERROR(files.Add(path, bytes));
    }
  }
  if (!flags.outputs_dir.empty()) {
    FP8_RETURN_IF_ERROR(files.Commit());
    std::printf("outputs:      %zu .npy files in %s\n", outputs.size(), flags.outputs_dir.c_str());
  }
  return OkStatus();
}

// --compare: evaluates the module as written and prints each output's error against it.
Status CompareWithOriginal(const std::vector<Value>& outputs, const std::vector<Value>& arguments,
                           Backend backend, const RunCommandFlags& flags) {
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> original, LoadModule(flags));
  hlo::HloInterpreter original_interpreter(
      {.dot_backend = backend, .max_evaluation_steps = flags.max_evaluation_steps});
  FP8_ASSIGN_OR_RETURN(Value original_result, original_interpreter.Evaluate(*original, arguments));
  PrintGemmTimes(original_interpreter, 1, "original:");
  std::vector<Value> original_outputs;
  Flatten(original_result, &original_outputs);
  if (original_outputs.size() != outputs.size()) {
    return Internal("the rewritten module has %zu outputs, the original %zu", outputs.size(),
                    original_outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ErrorStats error = CompareValues(outputs[i].AsDoubles(), original_outputs[i].AsDoubles());
    std::printf(
        "compare out%zu: max abs error / max |original| %.3e, relative Frobenius %.3e, max abs "
        "%.3e",
        i, error.max_relative, error.relative_frobenius, error.max_abs);
    if (error.nonfinite_reference > 0 || error.nonfinite_actual > 0) {
      std::printf(", NaN/inf elements: original %lld, rewritten %lld, mismatches %lld",
                  static_cast<long long>(error.nonfinite_reference),
                  static_cast<long long>(error.nonfinite_actual),
                  static_cast<long long>(error.nonfinite_mismatches));
    }
    std::printf(" (rewritten vs original)\n");
  }
  return OkStatus();
}

Status RunRunCommand(const RunCommandFlags& flags) {
  FP8_ASSIGN_OR_RETURN(const Backend backend, ToBackend(flags.backend));
  if (flags.backend.engine != "auto") {
    return InvalidArgument(
        "--engine %s: run's executor chooses each GEMM's engine itself (auto); --engine is for "
        "dot, accuracy and probe",
        flags.backend.engine.c_str());
  }
  if (flags.backend.sm_count_target != 0) {
    return InvalidArgument(
        "--sm-count-target %d: run's executor plans each GEMM with the process's defaults; "
        "--sm-count-target is for dot, accuracy and probe",
        flags.backend.sm_count_target);
  }
  if (flags.device_resident && ResolveBackend(backend) != Backend::kCuda) {
    return InvalidArgument("--device-resident needs --backend cuda");
  }
  if (flags.compare && flags.no_rewrite) {
    return InvalidArgument(
        "--compare compares the rewritten module with the original; it cannot "
        "be combined with --no-rewrite");
  }
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LoadAndRewrite(flags));
  const Backend resolved = ResolveBackend(backend);
  std::printf("backend:      %s: dots and GEMM custom calls on %s, every other op on the host\n",
              BackendName(resolved), resolved == Backend::kCuda ? "the GPU (cuBLASLt)" : "the CPU");
  FP8_ASSIGN_OR_RETURN(std::vector<Value> arguments,
                       MakeArguments(*module->entry_computation(), flags));
  if (flags.inputs.empty()) {
    std::printf("inputs:       random (seed %llu)\n", static_cast<unsigned long long>(flags.seed));
  } else {
    std::printf("inputs:       %zu .npy files\n", flags.inputs.size());
  }
  FP8_ASSIGN_OR_RETURN(Value result, Evaluate(*module, arguments, resolved, flags));
  std::vector<Value> outputs;
  Flatten(result, &outputs);
  FP8_RETURN_IF_ERROR(ReportOutputs(outputs, flags));
  if (flags.compare) FP8_RETURN_IF_ERROR(CompareWithOriginal(outputs, arguments, resolved, flags));
  return OkStatus();
}

}  // namespace

void AddRunCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RunCommandFlags>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run an HLO module: parse, verify, fuse FP8 GEMMs, evaluate (GEMMs on the chosen backend, "
      "other ops on the host) and print each output's shape, dtype and checksum");
  command->add_option("module", flags->module_path, "HLO text file")->required();
  AddBackendFlags(*command, flags->backend);  // where dots and GEMM custom calls run (default cpu)
  command
      ->add_option("--inputs", flags->inputs,
                   "Comma-separated .npy files, one per entry parameter (default: random)")
      ->delimiter(',');
  command->add_option("--seed", flags->seed, "Seed of the random inputs (default 1)");
  command->add_option("--outputs", flags->outputs_dir, "Write the outputs to DIR/out0.npy, ...");
  command->add_flag("--compare", flags->compare,
                    "Also run the unrewritten module and print the error per output");
  command->add_flag("--no-rewrite", flags->no_rewrite, "Run the module as written");
  command->add_flag("--device-resident", flags->device_resident,
                    "With --backend cuda: keep every array on the GPU (modules made of GEMMs over "
                    "their inputs; see hlo/device_executor.h)");
  command
      ->add_option("--repeat", flags->repeat,
                   "Evaluate N times; report the first run and the warm median (GEMM device "
                   "time and evaluation time)")
      ->check(CLI::Range(1, 1000));
  command
      ->add_option("--max-evaluation-steps", flags->max_evaluation_steps,
                   "Stop with an error after N instructions evaluated, calls included "
                   "(default 100000000)")
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  command->add_flag(
      "--xla-excess-precision", flags->xla_excess_precision,
      "Drop convert<wide>(convert<narrow>(x)) round trips first, as XLA does by "
      "default (xla_allow_excess_precision): reproduces XLA's numbers, not the HLO's");
  command->callback([flags, &exit_code] {
    Status status = RunRunCommand(*flags);
    if (!status.ok()) {
      std::fprintf(stderr, "fp8dot run: error: %s\n", status.message().c_str());
      exit_code = 1;
    }
  });
}

}  // namespace fp8dot::cli
