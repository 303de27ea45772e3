#include "cuda/stream_handoff.h"

#include "cuda/cuda_status.h"

namespace fp8dot::cuda {
namespace {

// Whether `stream` is capturing a graph; an unanswerable query (the legacy stream while another
// stream captures globally) reads as capturing, so nothing is ordered against it. The failed
// query's error is cleared: later launch checks read the last error and must not see it.
bool Capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

StreamHandoff::~StreamHandoff() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

Status StreamHandoff::Enter(cudaStream_t stream, const std::string& context) {
  capturing_ = Capturing(stream);
  if (capturing_) return OkStatus();
  FP8_CUDA_RETURN_IF_ERROR(cudaStreamGetId(stream, &stream_id_), context);
  if (event_ == nullptr) {
    FP8_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), context);
  }
  if (recorded_ && stream_id_ != last_stream_id_) {
    FP8_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, event_, 0), context);
  }
  return OkStatus();
}

Status StreamHandoff::Leave(cudaStream_t stream, const std::string& context) {
  if (capturing_) return OkStatus();
  const cudaError_t recorded = cudaEventRecord(event_, stream);
  if (recorded != cudaSuccess) {
    cudaStreamSynchronize(stream);  // nothing of this run is left for a later one to wait for
    recorded_ = false;
    return CudaCallStatus(recorded, "cudaEventRecord(event, stream)", __FILE__, __LINE__, context);
  }
  recorded_ = true;
  last_stream_id_ = stream_id_;
  return OkStatus();
}

}  // namespace fp8dot::cuda
