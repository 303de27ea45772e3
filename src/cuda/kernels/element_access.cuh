// Reading and writing one element of any fp8dot type from device code, through f32.
// Stores round to nearest even; FP8 stores saturate (+-inf -> +-max, NaN stays NaN), as
// cuBLASLt's FP8 D does.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "fp8dot/dtype.h"

namespace fp8dot::cuda {

__device__ inline void StoreAsType(void* data, DType type, int64_t i, float value) {
  switch (type) {
    case DType::kF32:
      static_cast<float*>(data)[i] = value;
      break;
    case DType::kF64:
      static_cast<double*>(data)[i] = value;
      break;
    case DType::kBF16:
      static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16_rn(value);
      break;
    case DType::kF16:
      static_cast<__half*>(data)[i] = __float2half_rn(value);
      break;
    case DType::kF8E4M3FN:
      static_cast<__nv_fp8_storage_t*>(data)[i] =
          __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3);
      break;
    case DType::kF8E5M2:
      static_cast<__nv_fp8_storage_t*>(data)[i] =
          __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E5M2);
      break;
  }
}

}  // namespace fp8dot::cuda
