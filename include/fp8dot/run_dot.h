// One choice of backend and one dispatcher for a dot on host data. The CLI (`dot`, `accuracy`,
// `probe`, `run`), the HLO interpreter and the Python binding all run dots through RunDot, so a
// backend (or a later engine) is added in one place.
//
//   auto           cuda when the CUDA backend is built and a Hopper GPU is present, else
//                  cpu-emulation
//   cpu-emulation  models the resolved accumulation, FP8 fast accumulator included (slow)
//   cpu-blas       upcast + OpenBLAS sgemm: f32 accumulation whatever the mode (fast)
//   cpu-reference  exact products, f64 sums: the definition of correct
//   cuda           cuBLASLt on the GPU (copies in, runs the cached CudaDotPlan, copies out)
//
// Data already on the GPU does not go through here: it runs a CudaDotPlan (cuda_backend.h)
// on the caller's stream, which is what timing and framework callers need.
#pragma once

#include <string>
#include <string_view>

#include "fp8dot/accumulator_model.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/dot_arguments.h"
#include "fp8dot/k_split.h"

namespace fp8dot {

class CudaDotPlan;

enum class Backend { kAuto, kCpuEmulation, kCpuBlas, kCpuReference, kCuda };

// "auto", "cpu-emulation", "cpu-blas", "cpu-reference", "cuda".
const char* BackendName(Backend backend);
// Every BackendName, and "cpu" for cpu-emulation. The error lists the accepted names.
StatusOr<Backend> ParseBackend(std::string_view text);
bool IsCpuBackend(Backend backend);
// kAuto becomes kCuda or kCpuEmulation (QueryCudaDevice decides); the others stay as they are.
Backend ResolveBackend(Backend backend);

struct RunDotOptions {
  // cpu-emulation only: the accumulator model, its split of K included.
  Fp8AccumulatorModel accumulator_model;
  // cuda only: which GEMM implementation runs (cuda_backend.h), and the own kernel's promotion
  // interval (CudaDotOptions::own_promotion_interval); the plan is autotuned as the process's
  // setting says (DefaultCudaDotOptions).
  GemmEngine engine = GemmEngine::kAuto;
  int own_promotion_interval = 0;
  // cuda only: the SMs the GEMM may use, at most (CudaDotOptions::sm_count_target; 0: all).
  int sm_count_target = 0;
};

// What ran, besides the result.
struct DotRunInfo {
  Backend backend = Backend::kAuto;  // the backend that ran (never kAuto)
  std::string description;           // "cpu (emulation of the accumulation)", "cuda (...)"
  // cuda: device time of the plan's run (CUDA events, copies excluded); cpu: wall time.
  double milliseconds = 0;
  KSplit k_split;                     // how the backend cut K
  const CudaDotPlan* plan = nullptr;  // cuda: the cached plan that ran (Explain(), info())
};

// Runs `spec` on `arguments` with `backend`. Errors are the backend's (UNAVAILABLE for cuda
// without a CUDA build or a Hopper GPU).
StatusOr<DotResult> RunDot(Backend backend, const DotSpec& spec, const DotArguments& arguments,
                           const RunDotOptions& options = {}, DotRunInfo* info = nullptr);

}  // namespace fp8dot
