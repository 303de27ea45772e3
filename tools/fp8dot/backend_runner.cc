#include "backend_runner.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>

namespace fp8dot::cli {

void AddBackendFlags(CLI::App& command, BackendFlags& flags) {
  command.add_option("--backend", flags.backend,
                     "auto (cuda when a Hopper GPU is present, else cpu), cpu (= cpu-emulation), "
                     "cpu-emulation, cpu-blas, cpu-reference or cuda");
  command.add_option("--cpu-path", flags.cpu_path,
                     "With --backend cpu (or auto without a GPU): emulation (models the "
                     "accumulation), blas (f32, fast) or reference (exact)");
  command.add_option("--engine", flags.engine,
                     "With the cuda backend: the GEMM engine: auto (the own kernel where it "
                     "measured faster, else cuBLASLt), cublaslt, or own (fp8dot's kernel: 1x128 x "
                     "128x128 or 1x128 x 1x128 block scales or tensor/row scales, promoted, "
                     "bf16/f32 out; docs/own-gemm.md)");
  command.add_option("--sm-count-target", flags.sm_count_target,
                     "With the cuda backend: run the GEMM on at most N SMs, leaving the others to "
                     "kernels beside it (cuBLASLt's SM count target, the own kernel's grid); 0: "
                     "all");
}

StatusOr<GemmEngine> ToGemmEngine(const BackendFlags& flags, Backend backend) {
  FP8_ASSIGN_OR_RETURN(const GemmEngine engine, ParseGemmEngine(flags.engine));
  if (engine != GemmEngine::kAuto && backend != Backend::kCuda) {
    return InvalidArgument("--engine %s picks the cuda backend's GEMM, but the backend is %s",
                           flags.engine.c_str(), BackendName(backend));
  }
  return engine;
}

StatusOr<int> ToSmCountTarget(const BackendFlags& flags, Backend backend) {
  if (flags.sm_count_target < 0) {
    return InvalidArgument("--sm-count-target %d: a count of SMs, 0 (all of them) or more",
                           flags.sm_count_target);
  }
  if (flags.sm_count_target != 0 && backend != Backend::kCuda) {
    return InvalidArgument(
        "--sm-count-target %d holds the cuda backend's GEMM to fewer SMs, but "
        "the backend is %s",
        flags.sm_count_target, BackendName(backend));
  }
  return flags.sm_count_target;
}

StatusOr<Backend> ToBackend(const BackendFlags& flags) {
  StatusOr<Backend> backend = ParseBackend(flags.backend);
  if (!backend.ok()) {
    return InvalidArgument(
        "unknown --backend '%s' (expected auto, cpu, cpu-emulation, "
        "cpu-blas, cpu-reference or cuda)",
        flags.backend.c_str());
  }
  if (flags.cpu_path.empty()) return *backend;
  StatusOr<Backend> path = ParseBackend("cpu-" + flags.cpu_path);
  if (!path.ok() || !IsCpuBackend(*path)) {
    return InvalidArgument("unknown --cpu-path '%s' (expected emulation, blas or reference)",
                           flags.cpu_path.c_str());
  }
  if (flags.backend != "cpu" && flags.backend != "auto") {
    return InvalidArgument("--cpu-path %s contradicts --backend %s (use --backend cpu)",
                           flags.cpu_path.c_str(), flags.backend.c_str());
  }
  const Backend resolved = ResolveBackend(*backend);
  return IsCpuBackend(resolved) ? *path : resolved;
}

int SplitKChoice::SlicesFor(int64_t k) const {
  if (per_k.empty()) return all;
  const auto it = per_k.find(k);
  return it == per_k.end() ? 1 : it->second;
}

StatusOr<SplitKChoice> ParseSplitKChoice(const std::string& text) {
  SplitKChoice choice;
  auto parse_int = [&](const std::string& item, int64_t minimum) -> StatusOr<int64_t> {
    char* end = nullptr;
    const long long value = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < minimum) {
      return InvalidArgument(
          "--split-k: '%s' in '%s' is not an integer >= %lld (expected S or K=S,K=S,...)",
          item.c_str(), text.c_str(), static_cast<long long>(minimum));
    }
    return static_cast<int64_t>(value);
  };
  if (text.find_first_of("=,") == std::string::npos) {
    FP8_ASSIGN_OR_RETURN(int64_t slices, parse_int(text, 1));
    choice.all = static_cast<int>(std::min<int64_t>(slices, 1 << 20));
    return choice;
  }
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    const size_t equals = item.find('=');
    if (equals == std::string::npos) {
      return InvalidArgument("--split-k: '%s' in '%s' is not K=S", item.c_str(), text.c_str());
    }
    FP8_ASSIGN_OR_RETURN(int64_t k, parse_int(item.substr(0, equals), 1));
    FP8_ASSIGN_OR_RETURN(int64_t slices, parse_int(item.substr(equals + 1), 1));
    choice.per_k[k] = static_cast<int>(std::min<int64_t>(slices, 1 << 20));
    begin = comma + 1;
  }
  return choice;
}

StatusOr<TimedResult> RunOnBackend(const DotProblem& problem, const BackendChoice& choice) {
  RunDotOptions options;
  options.accumulator_model = choice.model;
  options.engine = choice.engine;
  options.sm_count_target = choice.sm_count_target;
  // The own kernel promotes as the emulation is told to (with tensor or row scales; block
  // scales take 128, the flag's default).
  if (choice.engine == GemmEngine::kOwn) {
    options.own_promotion_interval = choice.model.promotion_interval;
  }
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(problem.spec));
  options.accumulator_model.split.slices = choice.split_k.SlicesFor(dot.k);
  TimedResult timed;
  FP8_ASSIGN_OR_RETURN(
      timed.result, RunDot(choice.backend, problem.spec, problem.arguments(), options, &timed.run));
  return timed;
}

}  // namespace fp8dot::cli
