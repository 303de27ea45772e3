#include <cuda_runtime.h>

#include <utility>

#include "cuda/cuda_events.h"
#include "cuda/cuda_status.h"
#include "fp8dot/cuda_buffer.h"

namespace fp8dot {

StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes, const char* what) {
  DeviceBuffer buffer;
  if (bytes == 0) return buffer;
  FP8_CUDA_RETURN_IF_ERROR(cudaMalloc(&buffer.data_, bytes),
                           StrFormat("%s: %zu bytes", what, bytes));
  buffer.size_ = bytes;
  return buffer;
}

StatusOr<DeviceBuffer> DeviceBuffer::AllocateAsync(size_t bytes, CudaStream stream,
                                                   const char* what) {
  DeviceBuffer buffer;
  if (bytes == 0) return buffer;
  FP8_CUDA_RETURN_IF_ERROR(cudaMallocAsync(&buffer.data_, bytes, stream),
                           StrFormat("%s: %zu bytes", what, bytes));
  buffer.size_ = bytes;
  buffer.async_ = true;
  buffer.stream_ = stream;
  return buffer;
}

void DeviceBuffer::Release() {
  if (data_ == nullptr) return;
  // Errors here can only come from a context that is already broken; nothing left to report to.
  if (async_) {
    (void)cudaFreeAsync(data_, stream_);
  } else {
    (void)cudaFree(data_);
  }
  data_ = nullptr;
  size_ = 0;
}

DeviceBuffer::~DeviceBuffer() { Release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      async_(other.async_),
      stream_(other.stream_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    async_ = other.async_;
    stream_ = other.stream_;
  }
  return *this;
}

Status CopyToDevice(void* device, const void* host, size_t bytes, const char* what) {
  if (bytes == 0) return OkStatus();
  FP8_CUDA_RETURN_IF_ERROR(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), what);
  return OkStatus();
}

Status CopyToHost(void* host, const void* device, size_t bytes, const char* what) {
  if (bytes == 0) return OkStatus();
  FP8_CUDA_RETURN_IF_ERROR(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), what);
  return OkStatus();
}

StatusOr<double> TimeOnDevice(CudaStream stream, const std::function<Status()>& work) {
  FP8_ASSIGN_OR_RETURN(cuda::EventPair events, cuda::EventPair::Create("TimeOnDevice"));
  FP8_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.start(), stream), "TimeOnDevice");
  FP8_RETURN_IF_ERROR(work());
  FP8_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.stop(), stream), "TimeOnDevice");
  FP8_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events.stop()), "TimeOnDevice");
  float milliseconds = 0;
  FP8_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&milliseconds, events.start(), events.stop()),
                           "TimeOnDevice");
  return static_cast<double>(milliseconds);
}

}  // namespace fp8dot
