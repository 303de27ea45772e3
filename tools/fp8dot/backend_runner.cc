#include "backend_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

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
    timed.k_split = stats.k_split;
    return timed;
  }
  if (backend != "cpu") {
    return InvalidArgument("unknown --backend '%s' (expected cpu, cuda or auto)", backend.c_str());
  }
  TimedResult timed;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<DotResult> result = Internal("unreachable");
  switch (choice.cpu_path) {
    case CpuPath::kEmulation: {
      timed.backend_description = "cpu (emulation of the accumulation)";
      FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(problem.spec));
      Fp8AccumulatorModel model = choice.model;
      model.split.slices = choice.split_k.SlicesFor(dot.k);
      timed.k_split = model.split;
      result = EmulatedDot(problem.spec, problem.arguments(), model);
      break;
    }
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
