// Orders one plan's runs across streams. A plan's device memory (cuBLASLt's workspace, the
// unfused GEMM output, converted and padded operands) serves every run, on whatever stream the
// run is enqueued: two runs on two streams at once would overwrite each other's. Each run
// therefore records an event on its stream when it is enqueued, and a run on another stream
// waits for that event first. Streams are told apart by CUDA's stream ID, unique for the life
// of the program (a handle may be reused by a stream created after another was destroyed, and
// cudaStreamPerThread is one handle for a stream per thread), and the plan never touches a
// stream it is not running on: the last run's may be gone (the autotuner's own stream is, after
// a race). Plans whose runs write no memory of their own skip all this (dot_plan.cc,
// RunsWritePlanMemory).
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
  // last run when that was enqueued on another stream. Not inside a CUDA graph capture (a
  // capture cannot wait on work outside it): torch synchronises the device before it captures,
  // and the replays of a captured graph are the caller's to order. An error here comes before
  // anything of the run is enqueued.
  Status Enter(cudaStream_t stream, const std::string& context);

  // After the run is enqueued on `stream` (whether or not enqueuing succeeded): records the event
  // the next run on another stream waits for. Nothing is recorded inside a capture. Should the
  // record fail, the stream is synchronised instead, so that no later run overlaps this one.
  Status Leave(cudaStream_t stream, const std::string& context);

 private:
  cudaEvent_t event_ = nullptr;  // the last run outside a capture (made at the first run)
  bool recorded_ = false;
  unsigned long long last_stream_id_ = 0;  // that run's stream
  // The run between Enter and Leave.
  bool capturing_ = false;
  unsigned long long stream_id_ = 0;
};

}  // namespace fp8dot::cuda
