// fp8dot probe: crafted single dot products that expose how the FP8 accumulator behaves — how
// many mantissa bits survive, truncation or rounding, how products are grouped — run on a
// backend next to the CPU emulation's prediction and the exact value.
//
// Every case is a = [row of K FP8 values], b = [K ones] (so the products are the a values):
//   swamp_jN      a = [256, 2^-N x (K-1)]: the small terms survive the fast accumulator only
//                 while 2^-N >= its quantum at 256, i.e. N <= mantissa_bits - 8.
//   position_pP   a[P] = 256, every other a = 2^-7: small terms in groups before the one holding
//                 256 are summed exactly, later ones are cut; the result counts them, which
//                 reveals the group size.
//   round_half    a = [256, 3 x 2^-6 x (K-1)]: 1.5 quanta each; truncation keeps 1, rounding 2.
//   cancel        a = [256, -256, 2^-9 x (K-2)]: the accumulator empties and must renormalise.
#include <cmath>
#include <cstdio>

#include "backend_runner.h"
#include "commands.h"
#include "dot_inputs.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/npy.h"

namespace fp8dot::cli {
namespace {

struct ProbeFlags {
  DotFlags dot;  // backend and accumulator model
  int64_t k = 1024;
  std::string record_dir;
};

struct CraftedCase {
  std::string name;
  std::vector<double> a;
};

std::vector<CraftedCase> CraftedCases(int64_t k) {
  std::vector<CraftedCase> cases;
  auto row = [k](double first, double rest) {
    std::vector<double> a(static_cast<size_t>(k), rest);
    a[0] = first;
    return a;
  };
  for (int j = 4; j <= 9; ++j)
    cases.push_back({"swamp_j" + std::to_string(j), row(256, std::ldexp(1.0, -j))});
  for (int64_t p : {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129}) {
    if (p >= k) continue;
    std::vector<double> a(static_cast<size_t>(k), std::ldexp(1.0, -7));
    a[static_cast<size_t>(p)] = 256;
    cases.push_back({"position_p" + std::to_string(p), a});
  }
  cases.push_back({"round_half", row(256, 3 * std::ldexp(1.0, -6))});
  std::vector<double> cancel = row(256, std::ldexp(1.0, -9));
  if (k > 1) cancel[1] = -256;
  cases.push_back({"cancel", cancel});
  return cases;
}

StatusOr<DotProblem> CaseProblem(const CraftedCase& crafted, Precision precision) {
  const auto k = static_cast<int64_t>(crafted.a.size());
  FP8_ASSIGN_OR_RETURN(HostTensor lhs, HostTensor::Create(DType::kF8E4M3FN, {1, k}));
  FP8_ASSIGN_OR_RETURN(HostTensor rhs, HostTensor::Create(DType::kF8E4M3FN, {k, 1}));
  for (int64_t i = 0; i < k; ++i) {
    lhs.SetPhysical(i, crafted.a[static_cast<size_t>(i)]);
    if (lhs.GetPhysical(i) != crafted.a[static_cast<size_t>(i)]) {
      return Internal("probe %s: %g is not an e4m3 value", crafted.name.c_str(),
                      crafted.a[static_cast<size_t>(i)]);
    }
    rhs.SetPhysical(i, 1.0);
  }
  DotProblemOptions options;
  options.lhs = lhs;
  options.rhs = rhs;
  options.precision_config.operand_precision = {precision, precision};
  return MakeDotProblem(options);
}

Status RunProbeCommand(const ProbeFlags& flags) {
  FP8_ASSIGN_OR_RETURN(BackendChoice choice, ToBackendChoice(flags.dot));
  std::printf(
      "probe: crafted e4m3 dot products, K=%lld, backend %s vs the emulation (%d fraction "
      "bits, %s, groups of %d, promotion every %d)\n\n",
      static_cast<long long>(flags.k), flags.dot.backend.c_str(), choice.model.mantissa_bits,
      AccumulatorRoundingName(choice.model.rounding), choice.model.group_size,
      choice.model.promotion_interval);
  std::printf(
      "| case | exact | fast: backend | fast: emulation | promoted: backend | promoted: emulation "
      "|\n");
  std::printf("|---|---|---|---|---|---|\n");
  int disagreements = 0;
  for (const CraftedCase& crafted : CraftedCases(flags.k)) {
    double exact = 0;
    double backend[2], emulated[2];
    for (int mode = 0; mode < 2; ++mode) {
      const Precision precision = mode == 0 ? Precision::kDefault : Precision::kHighest;
      FP8_ASSIGN_OR_RETURN(DotProblem problem, CaseProblem(crafted, precision));
      FP8_ASSIGN_OR_RETURN(TimedResult run, RunOnBackend(problem, choice));
      FP8_ASSIGN_OR_RETURN(DotResult emulation,
                           EmulatedDot(problem.spec, problem.arguments(), choice.model));
      FP8_ASSIGN_OR_RETURN(DotResult reference, ReferenceDot(problem.spec, problem.arguments()));
      backend[mode] = run.result.output.GetPhysical(0);
      emulated[mode] = emulation.output.GetPhysical(0);
      exact = reference.output.GetPhysical(0);
      disagreements += backend[mode] != emulated[mode];
      if (!flags.record_dir.empty()) {
        const std::string prefix = flags.record_dir + "/probe_" + crafted.name;
        FP8_RETURN_IF_ERROR(WriteNpy(prefix + ".lhs.npy", problem.lhs));
        FP8_RETURN_IF_ERROR(WriteNpy(prefix + ".rhs.npy", problem.rhs));
        FP8_RETURN_IF_ERROR(
            WriteNpy(prefix + (mode == 0 ? ".fast.npy" : ".promoted.npy"), run.result.output));
      }
    }
    std::printf("| %s | %.9g | %.9g | %.9g | %.9g | %.9g |\n", crafted.name.c_str(), exact,
                backend[0], emulated[0], backend[1], emulated[1]);
  }
  std::printf("\n%d of %zu results differ from the emulation\n", disagreements,
              2 * CraftedCases(flags.k).size());
  return OkStatus();
}

}  // namespace

void AddProbeCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ProbeFlags>();
  CLI::App* command = app.add_subcommand(
      "probe",
      "Run crafted FP8 dot products that expose the accumulator (bits kept, truncation, "
      "grouping) on a backend, next to the CPU emulation's prediction");
  AddDotFlags(*command, flags->dot);
  command->add_option("--length", flags->k, "K of the crafted dot products")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 24));
  command->add_option("--record", flags->record_dir,
                      "Write each case's inputs and the backend's outputs as .npy to this folder");
  command->callback([flags, &exit_code] {
    Status status = RunProbeCommand(*flags);
    if (!status.ok()) {
      std::fprintf(stderr, "fp8dot probe: error: %s\n", status.message().c_str());
      exit_code = 1;
    }
  });
}

}  // namespace fp8dot::cli
