// Orders one plan's runs across streams. A plan's device memory (cuBLASLt's workspace, the
// unfused GEMM output, converted and padded operands) serves every run, on whatever stream the
// run is enqueued: two runs on two streams at once would overwrite each other's. A run on a
// stream other than the last run's therefore waits for the work enqueued on that one. Runs on
// one stream (the common case) cost nothing here.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "fp8dot/status.h"

namespace fp8dot::cuda {

class StreamHandoff {
 public:
  StreamHandoff() = default;
  StreamHandoff(const StreamHandoff&) = delete;
  StreamHandoff& operator=(const StreamHandoff&) = delete;
  ~StreamHandoff();

  // Before a run is enqueued on `stream`, under the plan's run lock: makes `stream` wait for the
  // last run's stream when they differ. Not across a CUDA graph capture (a capture cannot wait
  // on work outside it, nor other work on a capture's events): torch synchronises the device
  // before it captures, and the replays of a captured graph are the caller's to order.
  Status Enter(cudaStream_t stream, const std::string& context);

 private:
  bool has_run_ = false;
  cudaStream_t last_ = nullptr;
  cudaEvent_t event_ = nullptr;  // made at the first change of stream
};

}  // namespace fp8dot::cuda
