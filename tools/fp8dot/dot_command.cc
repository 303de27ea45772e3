// fp8dot dot: run one scaled dot, print the resolved accumulation, the time and the error
// against the CPU reference.
#include <cstdio>

#include "backend_runner.h"
#include "commands.h"
#include "dot_inputs.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/error_metrics.h"
#include "fp8dot/npy.h"

namespace fp8dot::cli {
namespace {

struct DotCommandFlags {
  DotFlags dot;
  bool require_fp8 = false;
  bool no_reference = false;
  bool explain = false;
  std::string output_path;
};

const char* AccumulationExplanation(AccumulationMode mode) {
  switch (mode) {
    case AccumulationMode::kFp8Fast:
      return "FP8 fast accumulation: partial sums stay in the tensor core (~14 bits)";
    case AccumulationMode::kFp8Promoted:
      return "FP8 promoted accumulation: partial sums promoted to FP32 every 128 K-elements";
    case AccumulationMode::kTf32:
      return "inputs rounded to TF32, FP32 accumulation";
    case AccumulationMode::kF32:
      return "FP32 accumulation";
    default:
      return "see docs/precision.md";
  }
}

Status RunDotCommand(const DotCommandFlags& flags, const CLI::App& command) {
  FP8_RETURN_IF_ERROR(RefuseRandomShapeOptionsWithFiles(command, flags.dot));
  FP8_ASSIGN_OR_RETURN(BackendChoice choice, ToBackendChoice(flags.dot));
  if (flags.explain && ResolveBackend(choice.backend) != Backend::kCuda) {
    return InvalidArgument(
        "--explain prints the CUDA plan: it needs --backend cuda (or auto on a GPU), but the "
        "backend is %s",
        BackendName(ResolveBackend(choice.backend)));
  }
  FP8_ASSIGN_OR_RETURN(DotProblemOptions options, ToProblemOptions(flags.dot));
  StatusOr<DotProblem> made = MakeDotProblem(std::move(options));
  if (made.status().code() == StatusCode::kResourceExhausted) {
    return ResourceExhausted("%s (set it with --max-memory)", made.status().message().c_str());
  }
  FP8_ASSIGN_OR_RETURN(DotProblem problem, std::move(made));
  const DotSpec& spec = problem.spec;
  if (flags.require_fp8 && !(IsFp8(spec.lhs.dtype) && IsFp8(spec.rhs.dtype))) {
    return InvalidArgument("--require-fp8: %s x %s is not an FP8 dot", DTypeName(spec.lhs.dtype),
                           DTypeName(spec.rhs.dtype));
  }
  if (flags.require_fp8 && !IsNativeFp8Pair(spec.lhs.dtype, spec.rhs.dtype)) {
    return InvalidArgument(
        "--require-fp8: %s x %s has no native FP8 GEMM (cuBLASLt supports e4m3xe4m3, e4m3xe5m2, "
        "e5m2xe4m3); it would run as an upcast f16 GEMM",
        DTypeName(spec.lhs.dtype), DTypeName(spec.rhs.dtype));
  }
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(spec));
  std::printf("dot:          %s x %s -> %s%s  (batch=%lld M=%lld N=%lld K=%lld)\n",
              spec.lhs.ToString().c_str(), spec.rhs.ToString().c_str(), DTypeName(spec.output_type),
              DimsToString(dot.output_dims).c_str(), static_cast<long long>(dot.batch),
              static_cast<long long>(dot.m), static_cast<long long>(dot.n),
              static_cast<long long>(dot.k));
  std::printf("precision:    operand_precision={%s,%s} algorithm=%s\n",
              PrecisionName(spec.precision_config.operand_precision[0]),
              PrecisionName(spec.precision_config.operand_precision[1]),
              AlgorithmName(spec.precision_config.algorithm));
  std::printf("accumulation: %s (%s)\n", AccumulationModeName(dot.accumulation),
              AccumulationExplanation(dot.accumulation));
  std::printf("scales:       lhs %s, rhs %s; epilogue %s\n", ScaleModeName(spec.lhs_scale.mode),
              ScaleModeName(spec.rhs_scale.mode), EpilogueName(spec.epilogue));

  FP8_ASSIGN_OR_RETURN(TimedResult run, RunOnBackend(problem, choice));
  const double gflops = 2.0 * static_cast<double>(dot.batch * dot.m) * static_cast<double>(dot.n) *
                        static_cast<double>(dot.k) / (run.run.milliseconds * 1e6);
  std::printf("backend:      %s\n", run.run.description.c_str());
  if (flags.explain && run.run.plan != nullptr) std::printf("%s", run.run.plan->Explain().c_str());
  std::printf("time:         %.3f ms (%.2f GFLOP/s)\n", run.run.milliseconds, gflops);
  if (run.result.amax.has_value()) std::printf("amax:         %.6g\n", *run.result.amax);
  if (!flags.no_reference) {
    FP8_ASSIGN_OR_RETURN(HostTensor reference, ReferenceDotExact(spec, problem.arguments()));
    const double output_scale = problem.output_scale ? problem.output_scale->GetPhysical(0) : 1.0;
    FP8_ASSIGN_OR_RETURN(ErrorStats error,
                         CompareToReference(run.result.output, reference, output_scale));
    std::printf("error:        %s (vs exact reference)\n", error.ToString().c_str());
  }
  if (!flags.output_path.empty()) {
    FP8_RETURN_IF_ERROR(WriteNpy(flags.output_path, run.result.output));
    std::printf("output:       %s\n", flags.output_path.c_str());
  }
  return OkStatus();
}

}  // namespace

void AddDotCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DotCommandFlags>();
  CLI::App* command = app.add_subcommand(
      "dot",
      "Run one scaled dot D = epilogue(alpha*scale_a*scale_b*(A.B) + beta*C + bias) and report "
      "the accumulation mode the PrecisionConfig resolves to, the time and the error");
  AddDotFlags(*command, flags->dot);
  command->add_flag("--require-fp8", flags->require_fp8,
                    "Fail unless the type pair runs as a native FP8 GEMM (not e5m2 x e5m2)");
  command->add_flag("--no-reference", flags->no_reference,
                    "Skip the comparison with the reference");
  command->add_option("--output", flags->output_path, "Write D to this .npy file");
  command->add_flag("--explain", flags->explain,
                    "With the cuda backend: print the plan (layouts, padding, scale modes, "
                    "FAST_ACCUM read back from the descriptor, algorithm)");
  command->callback([flags, command, &exit_code] {
    Status status = RunDotCommand(*flags, *command);
    if (!status.ok()) {
      std::fprintf(stderr, "fp8dot dot: error: %s\n", status.message().c_str());
      exit_code = 1;
    }
  });
}

}  // namespace fp8dot::cli
