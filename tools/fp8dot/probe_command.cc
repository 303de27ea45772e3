// fp8dot probe: crafted single dot products that expose how the FP8 accumulator behaves — how
// many mantissa bits survive, truncation or rounding, how products are grouped — run on a
// backend next to the CPU emulation's prediction and the exact value.
//
// Every case is a row a and a column b of K FP8 values (b = ones unless said otherwise):
//   swamp_jN      a = [256, 2^-N x (K-1)]: the small terms survive the fast accumulator only
//                 while 2^-N >= its quantum at 256, i.e. N <= mantissa_bits - 8.
//   position_pP   a[P] = 256, every other a = 2^-7: small terms in groups before the one holding
//                 256 are summed exactly, later ones are cut; the result counts them, which
//                 reveals the group size.
//   round_half    a = [256, 3 x 2^-6 x (K-1)]: 1.5 quanta each; truncation keeps 1, rounding 2.
//   cancel        a = [256, -256, 2^-9 x (K-2)]: the accumulator empties and must renormalise.
//   carry_alignment     a = [30, 2^-5 ...], b = [28, 1 ...]: 30 x 28 = 840 has exponent 9, but
//                 its operands' exponents sum to 8. Aligned at 8 the first group keeps its 2^-5
//                 products (quantum 2^-5); aligned at 9 it drops them (quantum 2^-4). An e5m2
//                 a has no 30 and starts with 28 (28 x 28 = 784, the same exponents).
//   subnormal_lhs a = [2^-9, 2^-6 ...], b = [256, 2^-6 ...]: the e4m3 subnormal 2^-9 times 256
//                 is 0.5 (exponent -1) but aligns at -6 + 8 = 2 if subnormals count as the
//                 smallest normal exponent; the first group's 2^-12 products show which. For an
//                 e5m2 a: a = [2^-16, 2^-14 ...] (aligns at -14 + 8 = -6, is 2^-8; 2^-20 terms).
//   subnormal_rhs (e5m2 b only) a = [256, 2^-6 ...], b = [2^-16, 2^-14 ...]: the same for an e5m2
//                 subnormal (2^-16 aligns at -14); the 2^-20 products show it.
#include <cmath>
#include <cstdio>

#include "backend_runner.h"
#include "commands.h"
#include "dot_inputs.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/file_writer.h"
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
  std::vector<double> a, b;
};

std::vector<CraftedCase> CraftedCases(int64_t k, DType lhs_type, DType rhs_type) {
  std::vector<CraftedCase> cases;
  auto row = [k](double first, double rest) {
    std::vector<double> a(static_cast<size_t>(k), rest);
    a[0] = first;
    return a;
  };
  const std::vector<double> ones(static_cast<size_t>(k), 1.0);
  for (int j = 4; j <= 9; ++j)
    cases.push_back({"swamp_j" + std::to_string(j), row(256, std::ldexp(1.0, -j)), ones});
  for (int64_t p : {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129}) {
    if (p >= k) continue;
    std::vector<double> a(static_cast<size_t>(k), std::ldexp(1.0, -7));
    a[static_cast<size_t>(p)] = 256;
    cases.push_back({"position_p" + std::to_string(p), a, ones});
  }
  cases.push_back({"round_half", row(256, 3 * std::ldexp(1.0, -6)), ones});
  std::vector<double> cancel = row(256, std::ldexp(1.0, -9));
  if (k > 1) cancel[1] = -256;
  cases.push_back({"cancel", cancel, ones});
  // e5m2 has no 30 (two mantissa bits): 28 x 28 = 784 has the same exponents (9 vs 4 + 4).
  const double carry = lhs_type == DType::kF8E5M2 ? 28 : 30;
  cases.push_back({"carry_alignment", row(carry, std::ldexp(1.0, -5)), row(28, 1.0)});
  if (lhs_type == DType::kF8E5M2) {
    cases.push_back({"subnormal_lhs", row(std::ldexp(1.0, -16), std::ldexp(1.0, -14)),
                     row(256, std::ldexp(1.0, -6))});
  } else {
    cases.push_back({"subnormal_lhs", row(std::ldexp(1.0, -9), std::ldexp(1.0, -6)),
                     row(256, std::ldexp(1.0, -6))});
  }
  if (rhs_type == DType::kF8E5M2) {
    cases.push_back({"subnormal_rhs", row(256, std::ldexp(1.0, -6)),
                     row(std::ldexp(1.0, -16), std::ldexp(1.0, -14))});
  }
  return cases;
}

// A [1, K] or [K, 1] tensor of `type` holding `values` exactly.
StatusOr<HostTensor> ExactTensor(const std::string& name, const char* operand, DType type,
                                 const Dims& dims, const std::vector<double>& values) {
  FP8_ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::Create(type, dims));
  for (size_t i = 0; i < values.size(); ++i) {
    tensor.SetPhysical(static_cast<int64_t>(i), values[i]);
    if (tensor.GetPhysical(static_cast<int64_t>(i)) != values[i]) {
      return InvalidArgument("probe %s: %s value %g is not a %s value", name.c_str(), operand,
                             values[i], DTypeName(type));
    }
  }
  return tensor;
}

StatusOr<DotProblem> CaseProblem(const CraftedCase& crafted, DType lhs_type, DType rhs_type,
                                 Precision precision) {
  const auto k = static_cast<int64_t>(crafted.a.size());
  DotProblemOptions options;
  FP8_ASSIGN_OR_RETURN(options.lhs, ExactTensor(crafted.name, "lhs", lhs_type, {1, k}, crafted.a));
  FP8_ASSIGN_OR_RETURN(options.rhs, ExactTensor(crafted.name, "rhs", rhs_type, {k, 1}, crafted.b));
  options.precision_config.operand_precision = {precision, precision};
  return MakeDotProblem(std::move(options));
}

Status RunProbeCommand(const ProbeFlags& flags, const CLI::App& command) {
  FP8_RETURN_IF_ERROR(RefuseOptions(
      command,
      {"--m",
       "--n",
       "--k",
       "--batch",
       "--out-type",
       "--precision",
       "--algorithm",
       "--lhs-scale-mode",
       "--rhs-scale-mode",
       "--lhs",
       "--rhs",
       "--lhs-scale",
       "--rhs-scale",
       "--lhs-batch-dims",
       "--rhs-batch-dims",
       "--lhs-contracting-dims",
       "--rhs-contracting-dims",
       "--epilogue",
       "--alpha",
       "--beta",
       "--output-scale",
       "--amax",
       "--distribution",
       "--seed"},
      "probe runs its own crafted [1,K] x [K,1] cases (--length K) in both precisions; it takes "
      "only the types, the backend and the accumulator model"));
  FP8_ASSIGN_OR_RETURN(BackendChoice choice, ToBackendChoice(flags.dot));
  FP8_ASSIGN_OR_RETURN(DotProblemOptions types, ToProblemOptions(flags.dot));
  if (!IsFp8(types.lhs_type) || !IsFp8(types.rhs_type)) {
    return InvalidArgument("probe crafts FP8 dot products: --lhs-type/--rhs-type must be FP8");
  }
  const std::vector<CraftedCase> cases = CraftedCases(flags.k, types.lhs_type, types.rhs_type);
  std::printf(
      "probe: crafted %s x %s dot products, K=%lld, backend %s vs the emulation (%d fraction "
      "bits, %s, groups of %d, promotion every %d)\n\n",
      DTypeName(types.lhs_type), DTypeName(types.rhs_type), static_cast<long long>(flags.k),
      flags.dot.backend.backend.c_str(), choice.model.mantissa_bits,
      AccumulatorRoundingName(choice.model.rounding), choice.model.group_size,
      choice.model.promotion_interval);
  std::printf(
      "| case | exact | fast: backend | fast: emulation | promoted: backend | promoted: emulation "
      "|\n");
  std::printf("|---|---|---|---|---|---|\n");
  int disagreements = 0;
  for (const CraftedCase& crafted : cases) {
    double exact = 0;
    double backend[2], emulated[2];
    // One case's files all or none: a failure in either mode leaves none of them behind.
    FileSetWriter files;
    const std::string prefix = flags.record_dir + "/probe_k" + std::to_string(flags.k) + "_" +
                               DTypeName(types.lhs_type) + "x" + DTypeName(types.rhs_type) + "_" +
                               crafted.name;
    for (int mode = 0; mode < 2; ++mode) {
      const Precision precision = mode == 0 ? Precision::kDefault : Precision::kHighest;
      FP8_ASSIGN_OR_RETURN(DotProblem problem,
                           CaseProblem(crafted, types.lhs_type, types.rhs_type, precision));
      FP8_ASSIGN_OR_RETURN(TimedResult run, RunOnBackend(problem, choice));
      FP8_ASSIGN_OR_RETURN(DotResult emulation,
                           EmulatedDot(problem.spec, problem.arguments(), choice.model));
      FP8_ASSIGN_OR_RETURN(DotResult reference, ReferenceDot(problem.spec, problem.arguments()));
      backend[mode] = run.result.output.GetPhysical(0);
      emulated[mode] = emulation.output.GetPhysical(0);
      exact = reference.output.GetPhysical(0);
      disagreements += backend[mode] != emulated[mode];
      if (!flags.record_dir.empty()) {
        if (mode == 0) {  // the operands are the same in both modes
          FP8_RETURN_IF_ERROR(files.Add(prefix + ".lhs.npy", SerializeNpy(problem.lhs)));
          FP8_RETURN_IF_ERROR(files.Add(prefix + ".rhs.npy", SerializeNpy(problem.rhs)));
        }
        FP8_RETURN_IF_ERROR(files.Add(prefix + (mode == 0 ? ".fast.npy" : ".promoted.npy"),
                                      SerializeNpy(run.result.output)));
      }
    }
    if (!flags.record_dir.empty()) FP8_RETURN_IF_ERROR(files.Commit());
    std::printf("| %s | %.9g | %.9g | %.9g | %.9g | %.9g |\n", crafted.name.c_str(), exact,
                backend[0], emulated[0], backend[1], emulated[1]);
  }
  std::printf("\n%d of %zu results differ from the emulation\n", disagreements, 2 * cases.size());
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
  command->callback([flags, command, &exit_code] {
    Status status = RunProbeCommand(*flags, *command);
    if (!status.ok()) {
      std::fprintf(stderr, "fp8dot probe: error: %s\n", status.message().c_str());
      exit_code = 1;
    }
  });
}

}  // namespace fp8dot::cli
