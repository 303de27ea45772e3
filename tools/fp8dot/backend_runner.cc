#include "backend_runner.h"

#include <chrono>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_device.h"

namespace fp8dot::cli {

StatusOr<CpuPath> ParseCpuPath(const std::string& text) {
  if (text == "emulation") return CpuPath::kEmulation;
  if (text == "blas") return CpuPath::kBlas;
  if (text == "reference") return CpuPath::kReference;
  return InvalidArgument("unknown --cpu-path '%s' (expected emulation, blas or reference)",
                         text.c_str());
}

StatusOr<TimedResult> RunOnBackend(const DotProblem& problem, const BackendChoice& choice) {
  std::string backend = choice.backend;
  if (backend == "auto") backend = QueryCudaDevice().ok() ? "cuda" : "cpu";
  if (backend == "cuda") {
    StatusOr<CudaDeviceInfo> device = QueryCudaDevice();
    if (!device.ok()) return device.status();
    CudaDotStats stats;  // device time of the plan's run (CUDA events), copies excluded
    StatusOr<DotResult> result = CudaDot(problem.spec, problem.arguments(), &stats);
    if (!result.ok()) return result.status();
    TimedResult timed;
    timed.result = std::move(result).value();
    timed.backend_description = "cuda (cuBLASLt on " + device->name + ", kernel time)";
    timed.milliseconds = stats.milliseconds;
    return timed;
  }
  if (backend != "cpu") {
    return InvalidArgument("unknown --backend '%s' (expected cpu, cuda or auto)", backend.c_str());
  }
  TimedResult timed;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<DotResult> result = Internal("unreachable");
  switch (choice.cpu_path) {
    case CpuPath::kEmulation:
      timed.backend_description = "cpu (emulation of the accumulation)";
      result = EmulatedDot(problem.spec, problem.arguments(), choice.model);
      break;
    case CpuPath::kBlas:
      timed.backend_description = "cpu (OpenBLAS, f32 accumulation)";
      result = BlasDot(problem.spec, problem.arguments());
      break;
    case CpuPath::kReference:
      timed.backend_description = "cpu (reference, exact products and f64 sums)";
      result = ReferenceDot(problem.spec, problem.arguments());
      break;
  }
  const auto stop = std::chrono::steady_clock::now();
  if (!result.ok()) return result.status();
  timed.result = std::move(result).value();
  timed.milliseconds = std::chrono::duration<double, std::milli>(stop - start).count();
  return timed;
}

}  // namespace fp8dot::cli
