// The process-wide plan cache: one CudaDotPlan per (DotSpec, options, device), made on first use.
// A plan's descriptors and buffers belong to the device that was current when it was made, so
// the current device is part of the key.
#include <map>
#include <mutex>

#include "cuda/dot_plan.h"
#include "fp8dot/cuda_device.h"

namespace fp8dot {

StatusOr<CudaDotPlan*> GetCachedCudaDotPlan(const DotSpec& spec, const CudaDotOptions& options) {
  static std::mutex mutex;
  static auto* cache = new std::map<std::string, std::unique_ptr<CudaDotPlan>>();
  if (spec.precision_config.operand_precision.size() != 2) {
    FP8_RETURN_IF_ERROR(ValidateDotSpec(spec).status());
  }
  FP8_ASSIGN_OR_RETURN(const int device, CurrentCudaDevice());
  const std::string key =
      DotSpecKey(spec) +
      StrFormat("|ws=%zu|tune=%d|%s|engine=%s|tile=%s|interval=%d|sms=%d|device=%d",
                options.workspace_bytes, options.autotune_candidates,
                options.autotune_cache_path.c_str(), GemmEngineName(options.engine),
                options.own_tile.c_str(), options.own_promotion_interval, options.sm_count_target,
                device);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second.get();
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(spec, options));
  CudaDotPlan* result = plan.get();
  cache->emplace(key, std::move(plan));
  return result;
}

}  // namespace fp8dot
