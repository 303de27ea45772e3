// The scale relayout kernel (see scale_relayout.h) and its launcher.
#include "cuda/cuda_status.h"
#include "cuda/kernels/hopper_primitives.cuh"
#include "cuda/kernels/scale_relayout.h"

namespace fp8dot::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxJobs = 2;

struct Jobs {
  ScaleRelayoutParams job[kMaxJobs];
  int64_t end[kMaxJobs];  // cumulative element counts
  int count;
};

// One thread per destination element of all jobs, grid-stride. The destination-contiguous
// index runs fastest so the writes coalesce. Scale arrays are small (M x K/128 at most).
__global__ void scale_relayout_kernel(const Jobs jobs) {
  hopper::LetDependentGridsStart();  // as the operand gathers do (operand_gather.cu)
  const int64_t total = jobs.end[jobs.count - 1];
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int j = i < jobs.end[0] ? 0 : 1;
    const ScaleRelayoutParams& p = jobs.job[j];
    const int64_t local = j == 0 ? i : i - jobs.end[0];
    const bool rows_fastest = p.dest_row_stride == 1;
    const int64_t r = rows_fastest ? local % p.dest_rows : local / p.dest_cols;
    const int64_t c = rows_fastest ? local / p.dest_rows : local % p.dest_cols;
    const float value =
        r < p.rows && c < p.cols ? p.source[r * p.source_row_stride + c * p.source_col_stride]
                                 : 1.0f;
    p.dest[r * p.dest_row_stride + c * p.dest_col_stride] = value;
  }
}

}  // namespace

Status LaunchScaleRelayouts(const ScaleRelayoutParams* params, int count, cudaStream_t stream,
                            const std::string& context) {
  if (count <= 0) return OkStatus();
  if (count > kMaxJobs) return Internal("scale relayout: %d jobs [%s]", count, context.c_str());
  Jobs jobs{};
  jobs.count = count;
  int64_t total = 0;
  for (int j = 0; j < count; ++j) {
    const ScaleRelayoutParams& p = params[j];
    if (p.source == nullptr || p.dest == nullptr) {
      return Internal("scale relayout: null pointer [%s]", context.c_str());
    }
    if (p.rows <= 0 || p.cols <= 0 || p.dest_rows < p.rows || p.dest_cols < p.cols) {
      return Internal("scale relayout: bad extents %lldx%lld -> %lldx%lld [%s]",
                      static_cast<long long>(p.rows), static_cast<long long>(p.cols),
                      static_cast<long long>(p.dest_rows), static_cast<long long>(p.dest_cols),
                      context.c_str());
    }
    jobs.job[j] = p;
    total += p.dest_rows * p.dest_cols;
    jobs.end[j] = total;
  }
  const int blocks = static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, 4096));
  scale_relayout_kernel<<<blocks, kThreads, 0, stream>>>(jobs);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("scale_relayout_kernel", context);
  return OkStatus();
}

}  // namespace fp8dot::cuda
