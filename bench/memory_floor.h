// The memory floor of a GEMM: the time to read A and B once from HBM and write D, with nothing
// else (a streaming kernel, no arithmetic). No GEMM kernel can beat it on inputs that are not in
// L2; gpu_bench reports it next to the small-M shapes, where cuBLASLt comes close to it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fp8dot/status.h"

namespace fp8dot::bench {

// Enqueues one streaming pass: reads a_bytes at a and b_bytes at b, writes d_bytes at d (all
// multiples of 16, 16-byte aligned). `blocks` x `threads` and the independent 16-byte loads
// each thread keeps in flight (4 or 8) set the launch; `sink` takes one word per block, written
// only if the data hash to a magic value (keeps the reads alive).
Status LaunchMemoryFloor(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes, void* d,
                         int64_t d_bytes, unsigned* sink, int blocks, int threads,
                         int loads_in_flight, cudaStream_t stream);

}  // namespace fp8dot::bench
