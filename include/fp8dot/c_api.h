// A C entry point for callers outside C++ (Python through ctypes, other runtimes): one scaled
// FP8 dot in the layout torch._scaled_mm takes, on the caller's CUDA stream, through the same
// cached CudaDotPlan as the C++ API (so the precision -> accumulation rule is the same one).
//
//   D[M,N] (out_type) = scale_a * scale_b * A[M,K] . B[K,N]
//   A row-major (K contiguous), B column-major (K contiguous, i.e. B^T row-major [N,K]),
//   D row-major; scale_a, scale_b: device pointers to one f32 each (tensor scales).
//
// Types are fp8dot's names ("f8e4m3fn", "f8e5m2"; out "bf16", "f16", "f32", "f8e4m3fn", ...);
// precision is "default" (fast accumulation for FP8) or "highest" (promoted). Returns 0 on
// success; otherwise non-zero, with the reason in `error` (NUL-terminated, truncated to
// `error_capacity`; `error` may be NULL). The first call for a problem creates its plan (and
// must not be inside CUDA graph capture); later calls only enqueue work.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) int fp8dot_scaled_mm(
    const void* a, const void* b, const float* scale_a, const float* scale_b, void* d, int64_t m,
    int64_t n, int64_t k, const char* a_type, const char* b_type, const char* out_type,
    const char* precision, void* cuda_stream, char* error, size_t error_capacity);

#ifdef __cplusplus
}
#endif
