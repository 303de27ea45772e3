// The process-wide autotuning setting (cuda_backend.h, AutotuneSetting): how the environment's
// variables are read, apart from the process's environment so that tests can give them.
#ifndef FP8DOT_CUDA_AUTOTUNE_SETTING_H_
#define FP8DOT_CUDA_AUTOTUNE_SETTING_H_

#include "fp8dot/cuda_backend.h"

namespace fp8dot::cuda {

// FP8DOT_AUTOTUNE's and FP8DOT_AUTOTUNE_CACHE's values (nullptr or "": unset). The candidates
// must be a non-negative decimal integer that fits an int.
StatusOr<AutotuneSetting> ParseAutotuneEnvironment(const char* candidates, const char* cache_path);

}  // namespace fp8dot::cuda

#endif  // FP8DOT_CUDA_AUTOTUNE_SETTING_H_
