// Runs a DotProblem on the backend the user chose and times it.
#pragma once

#include <string>

#include "fp8dot/accumulator_model.h"
#include "fp8dot/dot_problem.h"

namespace fp8dot::cli {

enum class CpuPath { kEmulation, kBlas, kReference };

struct BackendChoice {
  std::string backend = "auto";  // auto | cpu | cuda
  CpuPath cpu_path = CpuPath::kEmulation;
  Fp8AccumulatorModel model;
};

struct TimedResult {
  DotResult result;
  std::string backend_description;  // "cpu (emulation)", ...
  double milliseconds = 0;
};

StatusOr<CpuPath> ParseCpuPath(const std::string& text);
// "auto" is cuda when the CUDA backend is built and a Hopper GPU is present, else cpu.
StatusOr<TimedResult> RunOnBackend(const DotProblem& problem, const BackendChoice& choice);

}  // namespace fp8dot::cli
