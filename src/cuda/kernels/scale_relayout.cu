// The scale relayout kernel (see scale_relayout.h) and its launcher.
#include "cuda/cuda_status.h"
#include "cuda/kernels/scale_relayout.h"

namespace fp8dot::cuda {
namespace {

constexpr int kThreads = 256;

// One thread per destination element, grid-stride. Scale arrays are small (M x K/128 at most):
// this is launch-bound, not bandwidth-bound.
__global__ void scale_relayout_kernel(const ScaleRelayoutParams p) {
  const int64_t count = p.dest_rows * p.dest_cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / p.dest_cols, c = i % p.dest_cols;
    const float value =
        r < p.rows && c < p.cols ? p.source[r * p.source_row_stride + c * p.source_col_stride]
                                 : 1.0f;
    p.dest[r * p.dest_row_stride + c * p.dest_col_stride] = value;
  }
}

}  // namespace

Status LaunchScaleRelayout(const ScaleRelayoutParams& p, cudaStream_t stream,
                           const std::string& context) {
  if (p.source == nullptr || p.dest == nullptr) {
    return Internal("scale relayout: null pointer [%s]", context.c_str());
  }
  if (p.rows <= 0 || p.cols <= 0 || p.dest_rows < p.rows || p.dest_cols < p.cols) {
    return Internal("scale relayout: bad extents %lldx%lld -> %lldx%lld [%s]",
                    static_cast<long long>(p.rows), static_cast<long long>(p.cols),
                    static_cast<long long>(p.dest_rows), static_cast<long long>(p.dest_cols),
                    context.c_str());
  }
  const int64_t count = p.dest_rows * p.dest_cols;
  const int blocks = static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 4096));
  scale_relayout_kernel<<<blocks, kThreads, 0, stream>>>(p);
  FP8_CUDA_RETURN_IF_LAUNCH_FAILED("scale_relayout_kernel", context);
  return OkStatus();
}

}  // namespace fp8dot::cuda
