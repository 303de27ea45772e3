// Runs a DotProblem on the backend the user chose and times it.
#pragma once

#include <map>
#include <string>

#include "fp8dot/accumulator_model.h"
#include "fp8dot/dot_problem.h"

namespace fp8dot::cli {

enum class CpuPath { kEmulation, kBlas, kReference };

// The emulation's split-K slices: one count for every K, or one per K ("16384=6,65536=25", as
// `fp8dot accuracy --backend cuda` prints what cuBLASLt chose); K values not listed get 1.
struct SplitKChoice {
  int all = 1;
  std::map<int64_t, int> per_k;
  int SlicesFor(int64_t k) const;
};
StatusOr<SplitKChoice> ParseSplitKChoice(const std::string& text);

struct BackendChoice {
  std::string backend = "auto";  // auto | cpu | cuda
  CpuPath cpu_path = CpuPath::kEmulation;
  Fp8AccumulatorModel model;  // model.split.slices comes from split_k for each problem's K
  SplitKChoice split_k;
};

struct TimedResult {
  DotResult result;
  std::string backend_description;  // "cpu (emulation)", ...
  double milliseconds = 0;
  KSplit k_split;  // how the backend cut K (the CUDA plan's algorithm, or the emulation's)
};

StatusOr<CpuPath> ParseCpuPath(const std::string& text);
// "auto" is cuda when the CUDA backend is built and a Hopper GPU is present, else cpu.
StatusOr<TimedResult> RunOnBackend(const DotProblem& problem, const BackendChoice& choice);

}  // namespace fp8dot::cli
