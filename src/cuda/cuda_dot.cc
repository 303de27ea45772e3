// CudaDot: the host-tensor entry point. Copies the arguments to the GPU (stream-ordered
// allocations), runs the cached plan between two CUDA events, copies D and amax back.
#include <cuda_runtime.h>

#include <mutex>

#include "cuda/cuda_events.h"
#include "cuda/cuda_status.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_buffer.h"

namespace fp8dot {
namespace {

StatusOr<DeviceBuffer> CopyToDevice(const HostTensor* tensor, cudaStream_t stream, const char* what,
                                    const std::string& context) {
  if (tensor == nullptr) return DeviceBuffer();
  FP8_ASSIGN_OR_RETURN(
      DeviceBuffer buffer,
      DeviceBuffer::AllocateAsync(static_cast<size_t>(tensor->size_in_bytes()), stream, what));
  FP8_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(buffer.data(), tensor->data(), buffer.size(), cudaMemcpyHostToDevice, stream),
      std::string(what) + ": " + context);
  return buffer;
}

// CudaDot may be called from several threads: one call at a time (each waits for its results).
std::mutex& RunMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

StatusOr<DotResult> CudaDot(const DotSpec& spec, const DotArguments& arguments, CudaDotStats* stats,
                            const CudaDotOptions& options) {
  FP8_ASSIGN_OR_RETURN(CanonicalDot dot, ValidateDotSpec(spec));
  FP8_RETURN_IF_ERROR(CheckArgumentsMatchSpec(spec, arguments));
  FP8_ASSIGN_OR_RETURN(CudaDotPlan * plan, GetCachedCudaDotPlan(spec, options));
  std::lock_guard<std::mutex> lock(RunMutex());
  const std::string context = "CudaDot " + spec.lhs.ToString() + " x " + spec.rhs.ToString();
  cudaStream_t stream = cudaStreamPerThread;

  FP8_ASSIGN_OR_RETURN(DeviceBuffer lhs, CopyToDevice(arguments.lhs, stream, "lhs", context));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer rhs, CopyToDevice(arguments.rhs, stream, "rhs", context));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer lhs_scale,
                       CopyToDevice(arguments.lhs_scale, stream, "lhs scale", context));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer rhs_scale,
                       CopyToDevice(arguments.rhs_scale, stream, "rhs scale", context));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer c, CopyToDevice(arguments.c, stream, "C", context));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer bias, CopyToDevice(arguments.bias, stream, "bias", context));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer output_scale,
                       CopyToDevice(arguments.output_scale, stream, "output scale", context));
  DotResult result;
  result.accumulation = dot.accumulation;
  FP8_ASSIGN_OR_RETURN(result.output, HostTensor::Create(spec.output_type, dot.output_dims));
  FP8_ASSIGN_OR_RETURN(DeviceBuffer output,
                       DeviceBuffer::AllocateAsync(
                           static_cast<size_t>(result.output.size_in_bytes()), stream, "output"));
  DeviceBuffer amax;
  if (spec.compute_amax) {
    FP8_ASSIGN_OR_RETURN(amax, DeviceBuffer::AllocateAsync(sizeof(float), stream, "amax"));
  }

  CudaDotBuffers buffers;
  buffers.lhs = lhs.data();
  buffers.rhs = rhs.data();
  buffers.lhs_scale = lhs_scale.as<const float>();
  buffers.rhs_scale = rhs_scale.as<const float>();
  buffers.c = c.data();
  buffers.bias = bias.data();
  buffers.output_scale = output_scale.as<const float>();
  buffers.output = output.data();
  buffers.amax = amax.as<float>();

  FP8_ASSIGN_OR_RETURN(cuda::EventPair events, cuda::EventPair::Create(context));
  cudaEvent_t start = events.start(), stop = events.stop();
  FP8_CUDA_RETURN_IF_ERROR(cudaEventRecord(start, stream), context);
  FP8_RETURN_IF_ERROR(plan->Run(buffers, stream));
  FP8_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop, stream), context);

  FP8_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(result.output.data(), output.data(), output.size(),
                                           cudaMemcpyDeviceToHost, stream),
                           context);
  float amax_value = 0;
  if (spec.compute_amax) {
    FP8_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(&amax_value, amax.data(), sizeof(float), cudaMemcpyDeviceToHost, stream),
        context);
  }
  // Kernel faults surface here (or at the copies above): report them with the problem.
  FP8_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), context);
  if (spec.compute_amax) result.amax = amax_value;
  if (stats != nullptr) {
    float ms = 0;
    FP8_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop), context);
    stats->milliseconds = ms;
    stats->plan = plan;
  }
  return result;
}

}  // namespace fp8dot
