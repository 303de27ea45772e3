// One dot's argument data as the framework bindings hand it over: raw pointers into caller-owned
// memory (Python's data pointers, XLA's buffers), laid out as the dot's DotSpec says. Both
// bindings turn them into host views for RunDot or into the CUDA plan's buffers here.
#pragma once

#include <optional>

#include "fp8dot/cuda_backend.h"
#include "fp8dot/dot_arguments.h"
#include "fp8dot/dot_spec.h"
#include "fp8dot/run_dot.h"
#include "fp8dot/status.h"
#include "fp8dot/tensor.h"

namespace fp8dot {

struct DotPointers {
  const void* lhs = nullptr;
  const void* rhs = nullptr;
  const void* lhs_scale = nullptr;     // when spec.lhs_scale.mode != kNone
  const void* rhs_scale = nullptr;     // when spec.rhs_scale.mode != kNone
  const void* bias = nullptr;          // when spec.bias
  const void* c = nullptr;             // when spec.c
  const void* output_scale = nullptr;  // f32 scalar, when spec.output_scale
};

// Host views (no copies) of the arguments `spec` has, over `pointers`.
class HostDotViews {
 public:
  static StatusOr<HostDotViews> Make(const DotSpec& spec, const DotPointers& pointers);
  // Points into this object: valid while it lives.
  DotArguments arguments() const;

 private:
  std::optional<HostTensor> lhs_, rhs_, lhs_scale_, rhs_scale_, bias_, c_, output_scale_;
};

// Runs `spec` with `backend` (a CPU backend, or cuda, which copies through the GPU) on the host
// arguments at `pointers` and writes the row-major output to `output`; returns the amax when
// the spec computes one.
StatusOr<std::optional<double>> RunDotInto(Backend backend, const DotSpec& spec,
                                           const DotPointers& pointers, void* output,
                                           const RunDotOptions& options = {},
                                           DotRunInfo* info = nullptr);

// The pointers as a CUDA plan's buffers, with the output (and amax) the plan writes.
CudaDotBuffers CudaBuffersOf(const DotPointers& pointers, void* output, float* amax);

}  // namespace fp8dot
