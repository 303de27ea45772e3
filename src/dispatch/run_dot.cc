// RunDot: the one switch from a Backend to the function that computes the dot.
#include "fp8dot/run_dot.h"

#include <chrono>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_device.h"

namespace fp8dot {
namespace {

constexpr Backend kAllBackends[] = {Backend::kAuto, Backend::kCpuEmulation, Backend::kCpuBlas,
                                    Backend::kCpuReference, Backend::kCuda};

StatusOr<DotResult> RunOnCuda(const DotSpec& spec, const DotArguments& arguments,
                              const RunDotOptions& options, DotRunInfo& info) {
  FP8_ASSIGN_OR_RETURN(CudaDeviceInfo device, QueryCudaDevice());
  CudaDotStats stats;
  FP8_ASSIGN_OR_RETURN(CudaDotOptions cuda_options, DefaultCudaDotOptions());
  cuda_options.engine = options.engine;
  cuda_options.own_promotion_interval = options.own_promotion_interval;
  cuda_options.sm_count_target = options.sm_count_target;
  FP8_ASSIGN_OR_RETURN(DotResult result, CudaDot(spec, arguments, &stats, cuda_options));
  info.description = "cuda (" + stats.plan->info().engine + " on " + device.name + ", kernel time)";
  info.milliseconds = stats.milliseconds;
  info.k_split = stats.plan->info().k_split;
  info.plan = stats.plan;
  return result;
}

StatusOr<DotResult> RunOnCpu(Backend backend, const DotSpec& spec, const DotArguments& arguments,
                             const RunDotOptions& options, DotRunInfo& info) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<DotResult> result = Internal("no CPU backend %s", BackendName(backend));
  switch (backend) {
    case Backend::kCpuEmulation:
      info.description = "cpu (emulation of the accumulation)";
      info.k_split = options.accumulator_model.split;
      result = EmulatedDot(spec, arguments, options.accumulator_model);
      break;
    case Backend::kCpuBlas:
      info.description = "cpu (OpenBLAS, f32 accumulation)";
      result = BlasDot(spec, arguments);
      break;
    case Backend::kCpuReference:
      info.description = "cpu (reference, exact products and f64 sums)";
      result = ReferenceDot(spec, arguments);
      break;
    case Backend::kAuto:
    case Backend::kCuda:
      break;
  }
  const auto stop = std::chrono::steady_clock::now();
  info.milliseconds = std::chrono::duration<double, std::milli>(stop - start).count();
  return result;
}

}  // namespace

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kAuto:
      return "auto";
    case Backend::kCpuEmulation:
      return "cpu-emulation";
    case Backend::kCpuBlas:
      return "cpu-blas";
    case Backend::kCpuReference:
      return "cpu-reference";
    case Backend::kCuda:
      return "cuda";
  }
  return "unknown";
}

StatusOr<Backend> ParseBackend(std::string_view text) {
  if (text == "cpu") return Backend::kCpuEmulation;
  for (Backend backend : kAllBackends) {
    if (text == BackendName(backend)) return backend;
  }
  return InvalidArgument(
      "unknown backend '%.*s' (expected auto, cpu, cpu-emulation, cpu-blas, cpu-reference or "
      "cuda)",
      static_cast<int>(text.size()), text.data());
}

bool IsCpuBackend(Backend backend) {
  return backend == Backend::kCpuEmulation || backend == Backend::kCpuBlas ||
         backend == Backend::kCpuReference;
}

Backend ResolveBackend(Backend backend) {
  if (backend != Backend::kAuto) return backend;
  return QueryCudaDevice().ok() ? Backend::kCuda : Backend::kCpuEmulation;
}

StatusOr<DotResult> RunDot(Backend backend, const DotSpec& spec, const DotArguments& arguments,
                           const RunDotOptions& options, DotRunInfo* info) {
  DotRunInfo local;
  DotRunInfo& run = info != nullptr ? *info : local;
  run = DotRunInfo();
  run.backend = ResolveBackend(backend);
  if (run.backend == Backend::kCuda) return RunOnCuda(spec, arguments, options, run);
  return RunOnCpu(run.backend, spec, arguments, options, run);
}

}  // namespace fp8dot
