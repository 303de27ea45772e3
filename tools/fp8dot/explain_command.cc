// fp8dot explain: parse an HLO module, run the FP8 GEMM rewriter, print the rewritten module,
// one line per fused GEMM with the accumulation its PrecisionConfig resolves to, and the dots
// left alone with the reason.
#include <cstdio>

#include "commands.h"
#include "fp8dot/hlo/fp8_gemm_rewriter.h"
#include "fp8dot/hlo/gemm_backend_config.h"
#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"
#include "hlo/gemm_call.h"

namespace fp8dot::cli {
namespace {

struct ExplainFlags {
  std::string path;
  bool summary_only = false;
};

Status RunExplainCommand(const ExplainFlags& flags) {
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModuleFile(flags.path));
  FP8_RETURN_IF_ERROR(hlo::VerifyHloModule(*module));
  hlo::Fp8GemmRewriter rewriter;
  FP8_RETURN_IF_ERROR(rewriter.Run(module.get()).status());
  FP8_RETURN_IF_ERROR(hlo::VerifyHloModule(*module));
  if (!flags.summary_only) std::printf("%s\n", module->ToString().c_str());

  std::printf("// FP8 GEMMs:\n");
  int count = 0;
  for (hlo::HloComputation* computation : module->computations()) {
    for (hlo::HloInstruction* gemm : computation->MakeInstructionPostOrder()) {
      if (gemm->opcode() != hlo::HloOpcode::kCustomCall ||
          gemm->custom_call_target() != hlo::kCublasLtMatmulF8Target) {
        continue;
      }
      // The call comes from the user's text as often as from the rewriter: read it through
      // DescribeGemmCustomCall, which checks the operands and the result before anything uses
      // them (a call with too few operands, a non-tuple result or integer operands is an error).
      FP8_ASSIGN_OR_RETURN(const hlo::GemmCall call, hlo::DescribeGemmCustomCall(*gemm));
      FP8_ASSIGN_OR_RETURN(hlo::GemmBackendConfig config,
                           hlo::ParseGemmBackendConfig(gemm->backend_config()));
      const DType lhs = call.spec.lhs.dtype;
      const DType rhs = call.spec.rhs.dtype;
      StatusOr<AccumulationMode> resolved = ResolveAccumulation(lhs, rhs, config.precision_config);
      if (!resolved.ok()) {
        return Status(resolved.status().code(),
                      gemm->NameForErrors() + ": " + resolved.status().message());
      }
      const AccumulationMode mode = *resolved;
      std::printf(
          "//   %%%s: %s x %s -> %s, operand_precision={%s,%s} algorithm=%s -> %s, "
          "epilogue %s%s\n",
          gemm->name().c_str(), DTypeName(lhs), DTypeName(rhs), call.d_shape.ToString().c_str(),
          PrecisionName(config.precision_config.operand_precision[0]),
          PrecisionName(config.precision_config.operand_precision[1]),
          AlgorithmName(config.precision_config.algorithm), AccumulationModeName(mode),
          EpilogueName(config.epilogue), config.damax_output ? ", amax" : "");
      ++count;
    }
  }
  if (count == 0) std::printf("//   none\n");
  if (!rewriter.near_misses().empty()) {
    std::printf("// Not fused:\n");
    for (const std::string& miss : rewriter.near_misses()) std::printf("//   %s\n", miss.c_str());
  }
  return OkStatus();
}

}  // namespace

void AddExplainCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* command = app.add_subcommand(
      "explain",
      "Rewrite an HLO module's FP8 dequantise->dot->quantise chains into __cublas$lt$matmul$f8 "
      "calls and print the result, the accumulation each GEMM resolves to, and what stayed a dot");
  command->add_option("module", flags->path, "HLO text file (as XLA prints it or JAX exports it)")
      ->required();
  command->add_flag("--summary", flags->summary_only,
                    "Print only the GEMM summary, not the module");
  command->callback([flags, &exit_code] {
    Status status = RunExplainCommand(*flags);
    if (!status.ok()) {
      // Parse errors span several lines (source line and caret): keep them, they are the reason.
      std::fprintf(stderr, "fp8dot explain: error: %s\n", status.message().c_str());
      exit_code = 1;
    }
  });
}

}  // namespace fp8dot::cli
