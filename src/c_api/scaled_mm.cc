#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "fp8dot/c_api.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_device.h"
#include "fp8dot/precision.h"

namespace fp8dot {
namespace {

StatusOr<DotSpec> ScaledMmSpec(int64_t m, int64_t n, int64_t k, const char* a_type,
                               const char* b_type, const char* out_type, const char* precision) {
  if (m < 1 || n < 1 || k < 1) {
    return InvalidArgument("fp8dot_scaled_mm: m, n, k must be >= 1, got %lld, %lld, %lld",
                           static_cast<long long>(m), static_cast<long long>(n),
                           static_cast<long long>(k));
  }
  DotSpec spec;
  FP8_ASSIGN_OR_RETURN(DType lhs, ParseDType(a_type));
  FP8_ASSIGN_OR_RETURN(DType rhs, ParseDType(b_type));
  FP8_ASSIGN_OR_RETURN(spec.output_type, ParseDType(out_type));
  FP8_ASSIGN_OR_RETURN(Precision p, ParsePrecision(precision));
  spec.lhs = TensorSpec{lhs, {m, k}, {1, 0}};
  spec.rhs = TensorSpec{rhs, {k, n}, {0, 1}};  // column-major: K contiguous
  spec.precision_config.operand_precision = {p, p};
  spec.lhs_scale = {ScaleMode::kTensor, {}, {}};
  spec.rhs_scale = {ScaleMode::kTensor, {}, {}};
  return spec;
}

// The plan for a call, found without building a DotSpec: a call from Python is launch-bound at
// small M, and GetCachedCudaDotPlan's string key costs microseconds (the plans are the same
// cached CudaDotPlans either way). Per device, as GetCachedCudaDotPlan's are: a plan's memory
// belongs to the device it was made on.
StatusOr<CudaDotPlan*> PlanFor(int64_t m, int64_t n, int64_t k, const char* a_type,
                               const char* b_type, const char* out_type, const char* precision) {
  using Key = std::tuple<int, int64_t, int64_t, int64_t, std::string, std::string, std::string,
                         std::string>;
  static std::mutex mutex;
  static auto* plans = new std::map<Key, CudaDotPlan*>();
  if (a_type == nullptr || b_type == nullptr || out_type == nullptr || precision == nullptr) {
    return InvalidArgument("fp8dot_scaled_mm: a type, b type, out type and precision are required");
  }
  const StatusOr<int> device = CurrentCudaDevice();
  if (!device.ok()) {  // the arguments' own errors first, as on a machine with a GPU
    FP8_RETURN_IF_ERROR(ScaledMmSpec(m, n, k, a_type, b_type, out_type, precision).status());
    return device.status();
  }
  Key key{*device, m, n, k, a_type, b_type, out_type, precision};
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = plans->find(key);
    if (it != plans->end()) return it->second;
  }
  FP8_ASSIGN_OR_RETURN(DotSpec spec, ScaledMmSpec(m, n, k, a_type, b_type, out_type, precision));
  FP8_ASSIGN_OR_RETURN(CudaDotPlan * plan, GetCachedCudaDotPlan(spec));
  std::lock_guard<std::mutex> lock(mutex);
  (*plans)[std::move(key)] = plan;
  return plan;
}

}  // namespace
}  // namespace fp8dot

extern "C" int fp8dot_scaled_mm(const void* a, const void* b, const float* scale_a,
                                const float* scale_b, void* d, int64_t m, int64_t n, int64_t k,
                                const char* a_type, const char* b_type, const char* out_type,
                                const char* precision, void* cuda_stream, char* error,
                                size_t error_capacity) {
  using namespace fp8dot;
  Status status = [&]() -> Status {
    // A C caller cannot catch C++ exceptions (std::bad_alloc from the key's strings or a new
    // plan): they come back as the error text too.
    try {
      FP8_ASSIGN_OR_RETURN(CudaDotPlan * plan,
                           PlanFor(m, n, k, a_type, b_type, out_type, precision));
      CudaDotBuffers buffers;
      buffers.lhs = a;
      buffers.rhs = b;
      buffers.lhs_scale = scale_a;
      buffers.rhs_scale = scale_b;
      buffers.output = d;
      return plan->Run(buffers, static_cast<CudaStream>(cuda_stream));
    } catch (const std::exception& exception) {
      return Internal("fp8dot_scaled_mm: %s", exception.what());
    }
  }();
  if (status.ok()) return 0;
  if (error != nullptr && error_capacity > 0) {
    std::strncpy(error, status.ToString().c_str(), error_capacity - 1);
    error[error_capacity - 1] = '\0';
  }
  return 1;
}
