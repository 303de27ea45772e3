// Device memory with an owner: a move-only buffer that frees itself, and out-of-memory as a
// RESOURCE_EXHAUSTED status instead of a crash.
#pragma once

#include <cstddef>
#include <functional>

#include "fp8dot/cuda_backend.h"

namespace fp8dot {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // cudaMalloc (256-byte aligned). `what` names the buffer in errors ("lhs copy").
  static StatusOr<DeviceBuffer> Allocate(size_t bytes, const char* what);
  // Stream-ordered (cudaMallocAsync): usable once earlier work on `stream` is done, freed on
  // `stream` too, so no hidden synchronisation.
  static StatusOr<DeviceBuffer> AllocateAsync(size_t bytes, CudaStream stream, const char* what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void Release();
  void* data_ = nullptr;
  size_t size_ = 0;
  bool async_ = false;
  CudaStream stream_ = nullptr;
};

// Synchronous copies between host and device memory; errors name `what`.
Status CopyToDevice(void* device, const void* host, size_t bytes, const char* what);
Status CopyToHost(void* host, const void* device, size_t bytes, const char* what);

// Enqueues `work` on `stream` between two CUDA events, waits, and returns the device time in
// milliseconds. A failure inside `work` is returned as is.
StatusOr<double> TimeOnDevice(CudaStream stream, const std::function<Status()>& work);

}  // namespace fp8dot
