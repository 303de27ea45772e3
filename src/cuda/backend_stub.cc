// Used when the build has no CUDA compiler: the CUDA backend's API exists and says why it can't
// run, so every caller compiles either way.
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_buffer.h"

namespace fp8dot {
namespace {

Status NotBuilt() {
  return Unavailable(
      "this fp8dot build has no CUDA backend (nvcc was not found at configure time)");
}

}  // namespace

struct CudaDotPlan::Impl {
  DotSpec spec;
  CudaPlanInfo info;
};

CudaDotPlan::CudaDotPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaDotPlan::~CudaDotPlan() = default;
StatusOr<std::unique_ptr<CudaDotPlan>> CudaDotPlan::Create(const DotSpec&, const CudaDotOptions&) {
  return NotBuilt();
}
Status CudaDotPlan::Run(const CudaDotBuffers&, CudaStream) { return NotBuilt(); }
std::string CudaDotPlan::Explain() const { return "no CUDA backend in this build"; }
const CudaPlanInfo& CudaDotPlan::info() const { return impl_->info; }
const DotSpec& CudaDotPlan::spec() const { return impl_->spec; }

StatusOr<CudaDotPlan*> GetCachedCudaDotPlan(const DotSpec&, const CudaDotOptions&) {
  return NotBuilt();
}

StatusOr<DotResult> CudaDot(const DotSpec&, const DotArguments&, CudaDotStats*,
                            const CudaDotOptions&) {
  return NotBuilt();
}

Status QuantizeOnCuda(const QuantizeSpec&, const QuantizeBuffers&, CudaStream) {
  return NotBuilt();
}

StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t, const char*) { return NotBuilt(); }
StatusOr<DeviceBuffer> DeviceBuffer::AllocateAsync(size_t, CudaStream, const char*) {
  return NotBuilt();
}
void DeviceBuffer::Release() {}
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(other.data_), size_(other.size_) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept { return *this; }

Status CopyToDevice(void*, const void*, size_t, const char*) { return NotBuilt(); }
Status CopyToHost(void*, const void*, size_t, const char*) { return NotBuilt(); }
StatusOr<double> TimeOnDevice(CudaStream, const std::function<Status()>&) { return NotBuilt(); }

}  // namespace fp8dot
