// The process-wide plan cache: one CudaDotPlan per (DotSpec, options), made on first use.
#include <map>
#include <mutex>

#include "cuda/dot_plan.h"

namespace fp8dot {
namespace cuda {
namespace {

std::string ListKey(const std::vector<int64_t>& values) { return DimsToString(values); }

std::string TensorKey(const TensorSpec& t) { return t.ToString(); }

// A scale's layout; row-major, given or not, keys the same.
std::string ScaleLayoutKey(const OperandScale& scale) {
  if (scale.minor_to_major.empty() ||
      scale.minor_to_major == RowMajorLayout(static_cast<int64_t>(scale.dims.size()))) {
    return "";
  }
  std::string key = "L";
  key += ListKey(scale.minor_to_major);
  return key;
}

}  // namespace

std::string DotSpecKey(const DotSpec& spec) {
  const DotDimensionNumbers& d = spec.dimension_numbers;
  std::string key = TensorKey(spec.lhs) + "x" + TensorKey(spec.rhs);
  key += "|b" + ListKey(d.lhs_batch_dimensions) + ListKey(d.rhs_batch_dimensions);
  key += "|c" + ListKey(d.lhs_contracting_dimensions) + ListKey(d.rhs_contracting_dimensions);
  key += StrFormat("|p%s,%s,%s", PrecisionName(spec.precision_config.operand_precision.at(0)),
                   PrecisionName(spec.precision_config.operand_precision.at(1)),
                   AlgorithmName(spec.precision_config.algorithm));
  key += StrFormat("|o%s|s%s%s%s,%s%s%s", DTypeName(spec.output_type),
                   ScaleModeName(spec.lhs_scale.mode), ListKey(spec.lhs_scale.dims).c_str(),
                   ScaleLayoutKey(spec.lhs_scale).c_str(), ScaleModeName(spec.rhs_scale.mode),
                   ListKey(spec.rhs_scale.dims).c_str(), ScaleLayoutKey(spec.rhs_scale).c_str());
  // alpha and beta are exact in %a; beta's zero-ness changes the plan, the values do not, but
  // they are cheap to key on and keep one plan per distinct call.
  key += StrFormat("|a%a,%a", spec.alpha, spec.beta);
  key += "|C" + (spec.c ? TensorKey(*spec.c) : std::string("-"));
  key += StrFormat("|e%s", EpilogueName(spec.epilogue));
  key += "|B" + (spec.bias ? TensorKey(*spec.bias) : std::string("-"));
  key += StrFormat("|d%d%d", spec.output_scale ? 1 : 0, spec.compute_amax ? 1 : 0);
  return key;
}

}  // namespace cuda

StatusOr<CudaDotPlan*> GetCachedCudaDotPlan(const DotSpec& spec, const CudaDotOptions& options) {
  static std::mutex mutex;
  static auto* cache = new std::map<std::string, std::unique_ptr<CudaDotPlan>>();
  if (spec.precision_config.operand_precision.size() != 2) {
    FP8_RETURN_IF_ERROR(ValidateDotSpec(spec).status());
  }
  const std::string key = cuda::DotSpecKey(spec) +
                          StrFormat("|ws=%zu|tune=%d|%s", options.workspace_bytes,
                                    options.autotune_candidates,
                                    options.autotune_cache_path.c_str());
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second.get();
  FP8_ASSIGN_OR_RETURN(std::unique_ptr<CudaDotPlan> plan, CudaDotPlan::Create(spec, options));
  CudaDotPlan* result = plan.get();
  cache->emplace(key, std::move(plan));
  return result;
}

}  // namespace fp8dot
