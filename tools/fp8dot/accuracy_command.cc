// fp8dot accuracy: error of fast vs promoted FP8 accumulation against the exact reference, over
// K x input distribution (the table in docs/accuracy.md and FACTS.md).
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "backend_runner.h"
#include "commands.h"
#include "dot_inputs.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/error_metrics.h"
#include "fp8dot/file_writer.h"
#include "fp8dot/npy.h"
#include "run_program.h"

namespace fp8dot::cli {
namespace {

struct AccuracyFlags {
  DotFlags dot;  // types, backend, accumulator model; m/n/k/precision are set by the sweep
  std::vector<int64_t> k_values = {256, 1024, 4096, 16384};
  std::vector<std::string> distributions = {"symmetric", "positive", "heavy-tailed", "mixed"};
  std::string csv_path;
  std::string record_dir;
  std::string plot_path;
};

struct Measurement {
  double error = 0;  // relative Frobenius error vs the exact reference
  KSplit k_split;    // how the backend cut K
};

// With a non-empty `record_prefix`, also writes PREFIX.lhs.npy, PREFIX.rhs.npy,
// PREFIX.fast.npy / PREFIX.promoted.npy (the backend's f32 output) and PREFIX.fast.json /
// PREFIX.promoted.json (the backend's split of K): golden vectors the CPU emulation can be
// compared with (tests/cpu/golden_test.cc).
StatusOr<Measurement> MeasureError(DotProblemOptions options, const BackendChoice& choice,
                                   Precision precision, const std::string& record_prefix) {
  options.precision_config.operand_precision = {precision, precision};
  FP8_ASSIGN_OR_RETURN(DotProblem problem, MakeDotProblem(std::move(options)));
  FP8_ASSIGN_OR_RETURN(TimedResult run, RunOnBackend(problem, choice));
  if (!record_prefix.empty()) {
    // One case's files all or none.
    const std::string mode = precision == Precision::kDefault ? ".fast" : ".promoted";
    const std::string json = "{\"backend\": \"" + run.run.description +
                             "\", \"k_slices\": " + std::to_string(run.run.k_split.slices) +
                             ", \"k_tile\": " + std::to_string(run.run.k_split.tile) + "}\n";
    FileSetWriter files;
    FP8_RETURN_IF_ERROR(files.Add(record_prefix + ".lhs.npy", SerializeNpy(problem.lhs)));
    FP8_RETURN_IF_ERROR(files.Add(record_prefix + ".rhs.npy", SerializeNpy(problem.rhs)));
    FP8_RETURN_IF_ERROR(files.Add(record_prefix + mode + ".npy", SerializeNpy(run.result.output)));
    FP8_RETURN_IF_ERROR(files.Add(record_prefix + mode + ".json", json));
    FP8_RETURN_IF_ERROR(files.Commit());
  }
  FP8_ASSIGN_OR_RETURN(HostTensor reference, ReferenceDotExact(problem.spec, problem.arguments()));
  FP8_ASSIGN_OR_RETURN(ErrorStats error, CompareToReference(run.result.output, reference));
  return Measurement{error.relative_frobenius, run.run.k_split};
}

Status RunAccuracyCommand(const AccuracyFlags& flags, const CLI::App& command) {
  // The sweep sets K, the precision, the distribution and the f32 output itself, on random
  // operands of M x K and K x N.
  FP8_RETURN_IF_ERROR(RefuseOptions(
      command,
      {"--k", "--precision", "--distribution", "--out-type", "--lhs", "--rhs", "--lhs-scale",
       "--rhs-scale", "--lhs-batch-dims", "--rhs-batch-dims", "--lhs-contracting-dims",
       "--rhs-contracting-dims", "--output-scale"},
      "accuracy sweeps random [M,K] x [K,N] operands over --k-values and --distributions, "
      "with both precisions and an f32 output; this option does not apply (use `fp8dot dot`)"));
  FP8_ASSIGN_OR_RETURN(DotProblemOptions base, ToProblemOptions(flags.dot));
  FP8_ASSIGN_OR_RETURN(BackendChoice choice, ToBackendChoice(flags.dot));
  if (!IsFp8(base.lhs_type) || !IsFp8(base.rhs_type)) {
    return InvalidArgument(
        "accuracy compares FP8 accumulation modes: --lhs-type/--rhs-type must be FP8");
  }
  base.output_type = DType::kF32;
  if (!flags.plot_path.empty() && flags.csv_path.empty()) {
    return InvalidArgument("--plot draws from the CSV: give --csv FILE too");
  }
  // The CSV is written (checked, atomically) once the sweep is complete.
  std::ostringstream csv;
  csv << "lhs_type,rhs_type,m,n,k,distribution,fast_error,promoted_error,fast_k_slices,"
         "promoted_k_slices\n";
  std::printf(
      "accuracy: %s x %s, M=%lld N=%lld, f32 output, relative Frobenius error vs the exact "
      "reference, backend %s",
      DTypeName(base.lhs_type), DTypeName(base.rhs_type), static_cast<long long>(base.m),
      static_cast<long long>(base.n), flags.dot.backend.backend.c_str());
  if (ResolveBackend(choice.backend) == Backend::kCpuEmulation) {
    std::printf(
        " (emulation: %d fraction bits, %s, groups of %d, promotion every %d, products aligned "
        "by %s)",
        choice.model.mantissa_bits, AccumulatorRoundingName(choice.model.rounding),
        choice.model.group_size, choice.model.promotion_interval,
        choice.model.alignment == ProductAlignment::kOperandExponents ? "operand exponents"
                                                                      : "own exponent");
  }
  std::printf(
      "\n\n| K | distribution | fast | promoted | fast/promoted | split-K slices (fast, "
      "promoted) |\n|---|---|---|---|---|---|\n");
  for (int64_t k : flags.k_values) {
    if (k <= 0)
      return InvalidArgument("--k-values must be positive, got %lld", static_cast<long long>(k));
    for (const std::string& name : flags.distributions) {
      DotProblemOptions options = base;
      options.k = k;
      FP8_ASSIGN_OR_RETURN(options.distribution, ParseDistribution(name));
      std::string prefix;
      if (!flags.record_dir.empty()) {
        prefix = flags.record_dir + "/" + DTypeName(base.lhs_type) + "x" +
                 DTypeName(base.rhs_type) + "_k" + std::to_string(k) + "_" + name;
      }
      FP8_ASSIGN_OR_RETURN(Measurement fast,
                           MeasureError(options, choice, Precision::kDefault, prefix));
      FP8_ASSIGN_OR_RETURN(Measurement promoted,
                           MeasureError(options, choice, Precision::kHighest, prefix));
      std::printf("| %lld | %s | %.2e | %.2e | %.1f | %d, %d |\n", static_cast<long long>(k),
                  name.c_str(), fast.error, promoted.error,
                  promoted.error > 0 ? fast.error / promoted.error : 0.0, fast.k_split.slices,
                  promoted.k_split.slices);
      std::fflush(stdout);
      csv << DTypeName(base.lhs_type) << ',' << DTypeName(base.rhs_type) << ',' << base.m << ','
          << base.n << ',' << k << ',' << name << ',' << fast.error << ',' << promoted.error << ','
          << fast.k_split.slices << ',' << promoted.k_split.slices << '\n';
    }
  }
  if (!flags.csv_path.empty()) FP8_RETURN_IF_ERROR(WriteFileAtomically(flags.csv_path, csv.str()));
  if (!flags.plot_path.empty()) {
    // NOTE: matplotlib draws the plot (scripts/plot_accuracy.py). The paths travel as argv
    // entries, never through a shell, so no file name can run a command.
    FP8_RETURN_IF_ERROR(
        RunProgram({"python3", FP8DOT_SOURCE_DIR "/scripts/plot_accuracy.py", flags.plot_path,
                    flags.dot.backend.backend + "=" + flags.csv_path},
                   "plotting (is matplotlib installed? pip install matplotlib)"));
  }
  return OkStatus();
}

}  // namespace

void AddAccuracyCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<AccuracyFlags>();
  flags->dot.m = 32;
  flags->dot.n = 32;
  CLI::App* command = app.add_subcommand(
      "accuracy",
      "Sweep K x input distribution and print the error of fast (DEFAULT) and promoted (HIGHEST) "
      "FP8 accumulation against the exact reference");
  AddDotFlags(*command, flags->dot);
  command->add_option("--k-values", flags->k_values, "K values to sweep")->delimiter(',');
  command
      ->add_option("--distributions", flags->distributions,
                   "symmetric, positive, heavy-tailed, mixed")
      ->delimiter(',');
  command->add_option("--csv", flags->csv_path, "Also write the table as CSV");
  command->add_option("--plot", flags->plot_path,
                      "Also draw error vs K as a PNG (needs --csv, python3 and matplotlib)");
  command->add_option("--record", flags->record_dir,
                      "Write each case's inputs and the backend's outputs as .npy to this folder");
  command->callback([flags, command, &exit_code] {
    Status status = RunAccuracyCommand(*flags, *command);
    if (!status.ok()) {
      std::fprintf(stderr, "fp8dot accuracy: error: %s\n", status.message().c_str());
      exit_code = 1;
    }
  });
}

}  // namespace fp8dot::cli
