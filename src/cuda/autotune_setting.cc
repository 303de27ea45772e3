// The autotuning of the plans made on a caller's behalf (cuda_backend.h, AutotuneSetting). Built
// with and without CUDA, so the bindings can set and read it either way.
#include "cuda/autotune_setting.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace fp8dot {
namespace cuda {

StatusOr<AutotuneSetting> ParseAutotuneEnvironment(const char* candidates, const char* cache_path) {
  AutotuneSetting setting;
  if (candidates != nullptr && *candidates != '\0') {
    const char* end = candidates + std::strlen(candidates);
    const auto [stop, error] = std::from_chars(candidates, end, setting.candidates);
    if (error != std::errc() || stop != end || setting.candidates < 0) {
      return InvalidArgument(
          "FP8DOT_AUTOTUNE='%s' is not a number of candidates (a non-negative integer; 0 = no "
          "autotuning)",
          candidates);
    }
  }
  if (cache_path != nullptr) setting.cache_path = cache_path;
  return setting;
}

}  // namespace cuda

namespace {

std::mutex& SettingMutex() {
  static std::mutex mutex;
  return mutex;
}

// Empty until set or read from the environment.
std::optional<AutotuneSetting>& Setting() {
  static std::optional<AutotuneSetting> setting;
  return setting;
}

}  // namespace

Status SetDefaultAutotune(const AutotuneSetting& setting) {
  if (setting.candidates < 0) {
    return InvalidArgument("autotuning candidates must be >= 0 (0 = no autotuning), not %d",
                           setting.candidates);
  }
  std::lock_guard<std::mutex> lock(SettingMutex());
  Setting() = setting;
  return OkStatus();
}

StatusOr<AutotuneSetting> DefaultAutotune() {
  std::lock_guard<std::mutex> lock(SettingMutex());
  if (!Setting()) {
    FP8_ASSIGN_OR_RETURN(AutotuneSetting from_environment,
                         cuda::ParseAutotuneEnvironment(std::getenv("FP8DOT_AUTOTUNE"),
                                                        std::getenv("FP8DOT_AUTOTUNE_CACHE")));
    Setting() = std::move(from_environment);
  }
  return *Setting();
}

CudaDotOptions AutotunedCudaDotOptions(const AutotuneSetting& setting) {
  CudaDotOptions options;
  // One candidate is the heuristic's first, as zero is: the same options, so the same plan.
  options.autotune_candidates = setting.candidates > 1 ? setting.candidates : 0;
  options.autotune_cache_path = setting.cache_path;
  return options;
}

StatusOr<CudaDotOptions> DefaultCudaDotOptions() {
  FP8_ASSIGN_OR_RETURN(const AutotuneSetting setting, DefaultAutotune());
  return AutotunedCudaDotOptions(setting);
}

StatusOr<CudaDotPlan*> GetCachedCudaDotPlan(const DotSpec& spec) {
  FP8_ASSIGN_OR_RETURN(const CudaDotOptions options, DefaultCudaDotOptions());
  return GetCachedCudaDotPlan(spec, options);
}

}  // namespace fp8dot
