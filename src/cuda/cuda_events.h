// A start/stop pair of CUDA events for timing device work, destroyed with the object.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "cuda/cuda_status.h"

namespace fp8dot::cuda {

class EventPair {
 public:
  static StatusOr<EventPair> Create(const std::string& context) {
    EventPair pair;
    cudaError_t error = cudaEventCreate(&pair.start_);
    if (error == cudaSuccess) error = cudaEventCreate(&pair.stop_);
    if (error != cudaSuccess) {
      return CudaCallStatus(error, "cudaEventCreate", __FILE__, __LINE__, context);
    }
    return pair;
  }
  EventPair(EventPair&& other) noexcept : start_(other.start_), stop_(other.stop_) {
    other.start_ = other.stop_ = nullptr;
  }
  EventPair& operator=(EventPair&&) = delete;
  EventPair(const EventPair&) = delete;
  ~EventPair() {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
  }

  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  EventPair() = default;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace fp8dot::cuda
