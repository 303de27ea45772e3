// A fixed sequence of stream work captured once into an executable CUDA graph, destroyed with
// the object. Replaying it times the GPU alone: at small M a loop of calls measures the host's
// cost too (128x7168x2048 on the H200: 8.2 us a call in a loop, 6.6 us in a graph). Used by
// autotuning and gpu_bench.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "cuda/cuda_status.h"

namespace fp8dot::cuda {

class CapturedGraph {
 public:
  // Captures call(0), ..., call(count - 1) (each returning Status) on `stream`. A failing call,
  // capture or instantiation is returned as its status; the stream is left out of capture.
  template <typename Call>
  static StatusOr<CapturedGraph> Capture(cudaStream_t stream, int count, const Call& call,
                                         const std::string& context) {
    FP8_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                             context);
    Status status = OkStatus();
    for (int i = 0; i < count && status.ok(); ++i) status = call(i);
    cudaGraph_t graph = nullptr;
    cudaError_t error = cudaStreamEndCapture(stream, &graph);
    CapturedGraph result;
    if (status.ok() && error == cudaSuccess) error = cudaGraphInstantiate(&result.exec_, graph, 0);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (!status.ok()) {
      (void)cudaGetLastError();
      return status;
    }
    FP8_CUDA_RETURN_IF_ERROR(error, context);
    return result;
  }
  CapturedGraph(CapturedGraph&& other) noexcept : exec_(other.exec_) { other.exec_ = nullptr; }
  CapturedGraph& operator=(CapturedGraph&&) = delete;
  CapturedGraph(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }

  // Enqueues one replay of the whole sequence.
  Status Replay(cudaStream_t stream, const std::string& context) const {
    FP8_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, stream), context);
    return OkStatus();
  }

 private:
  CapturedGraph() = default;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace fp8dot::cuda
