// Fills device memory with pseudo-random finite values of a type (never zeros, never NaN or
// inf): scratch data for autotuning and benchmark inputs, which must not be timed on zeros.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "fp8dot/dtype.h"
#include "fp8dot/status.h"

namespace fp8dot::cuda {

// `count` elements of `type`, uniform in [low, high) and rounded to the type (saturating, so FP8
// never gets NaN); an exact zero is replaced by `high`.
Status LaunchFillRandom(void* data, DType type, int64_t count, uint64_t seed, float low,
                        float high, cudaStream_t stream);

}  // namespace fp8dot::cuda
