// The CLI's backend flags (--backend, --cpu-path, the emulation's --split-k), shared by `dot`,
// `accuracy`, `probe` and `run`, and one call that runs a DotProblem through RunDot.
#pragma once

#include <map>
#include <string>

#include "fp8dot/dot_problem.h"
#include "fp8dot/run_dot.h"

namespace CLI {
class App;
}

namespace fp8dot::cli {

// --backend NAME (fp8dot::ParseBackend's names) and --cpu-path PATH (emulation, blas,
// reference), which picks the CPU path when the backend is `cpu`, or `auto` on a machine
// without a GPU.
struct BackendFlags {
  std::string backend;
  std::string cpu_path;         // empty: the backend's own (emulation for cpu and auto)
  std::string engine = "auto";  // --engine: the cuda backend's GEMM engine (GemmEngine)
  int sm_count_target = 0;      // --sm-count-target: the cuda backend's GEMM on at most N SMs
};
void AddBackendFlags(CLI::App& command, BackendFlags& flags);
StatusOr<Backend> ToBackend(const BackendFlags& flags);
// --engine: refused unless the backend resolves to cuda (or the engine is auto).
StatusOr<GemmEngine> ToGemmEngine(const BackendFlags& flags, Backend backend);
// --sm-count-target: refused unless the backend resolves to cuda (or it is 0).
StatusOr<int> ToSmCountTarget(const BackendFlags& flags, Backend backend);

// The emulation's split-K slices: one count for every K, or one per K ("16384=6,65536=25", as
// `fp8dot accuracy --backend cuda` prints what cuBLASLt chose); K values not listed get 1.
struct SplitKChoice {
  int all = 1;
  std::map<int64_t, int> per_k;
  int SlicesFor(int64_t k) const;
};
StatusOr<SplitKChoice> ParseSplitKChoice(const std::string& text);

struct BackendChoice {
  Backend backend = Backend::kAuto;
  GemmEngine engine = GemmEngine::kAuto;
  int sm_count_target = 0;
  Fp8AccumulatorModel model;  // model.split.slices comes from split_k for each problem's K
  SplitKChoice split_k;
};

struct TimedResult {
  DotResult result;
  DotRunInfo run;  // the backend that ran, its time, how it cut K, the CUDA plan
};

StatusOr<TimedResult> RunOnBackend(const DotProblem& problem, const BackendChoice& choice);

}  // namespace fp8dot::cli
