// Restores the process's autotuning setting (cuda_backend.h, SetDefaultAutotune) when a test that
// changes it ends, however it ends (an ASSERT returns early), so later tests in the same process
// get the setting they started with (FP8DOT_AUTOTUNE's, when the environment sets it).
#pragma once

#include "fp8dot/cuda_backend.h"

namespace fp8dot::testing {

class ScopedAutotuneSetting {
 public:
  ScopedAutotuneSetting() : saved_(DefaultAutotune()) {}
  ~ScopedAutotuneSetting() {
    if (saved_.ok()) (void)SetDefaultAutotune(*saved_);
  }
  ScopedAutotuneSetting(const ScopedAutotuneSetting&) = delete;
  ScopedAutotuneSetting& operator=(const ScopedAutotuneSetting&) = delete;

 private:
  StatusOr<AutotuneSetting> saved_;
};

}  // namespace fp8dot::testing
