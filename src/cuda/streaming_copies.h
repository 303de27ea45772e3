// Timing on inputs as a model sees its weights: read from HBM, not from the L2 that the previous
// run left warm. Autotuning and gpu_bench rotate through this many copies of the inputs.
#pragma once

#include <algorithm>
#include <cstdint>

namespace fp8dot::cuda {

constexpr int64_t kMaxStreamingCopies = 32;

// Copies of `bytes_per_copy` that together make three times the L2 (one when a single copy is
// already larger), at most kMaxStreamingCopies.
inline int StreamingCopies(int64_t bytes_per_copy, int64_t l2_bytes) {
  return static_cast<int>(std::clamp<int64_t>(
      3 * l2_bytes / std::max<int64_t>(bytes_per_copy, 1) + 1, 1, kMaxStreamingCopies));
}

}  // namespace fp8dot::cuda
