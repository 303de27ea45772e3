// The XLA FFI handlers fp8dot registers with JAX (python/fp8dot/jax/_ffi.py registers them
// with jax.ffi.register_ffi_target): "fp8dot_scaled_dot" and "fp8dot_quantize".
//
// fp8dot_scaled_dot: one scaled dot_general. Operands, in this order; the optional ones are present
// when the attributes say so:
//   lhs, rhs                 FP8 (or bf16/f16/f32) arrays, row-major (XLA's default layout)
//   lhs_scale, rhs_scale     f32, when lhs_scale_mode / rhs_scale_mode is not "none", in the
//                            layouts lhs_scale_layout / rhs_scale_layout (the call's operand
//                            layouts, which XLA hands over: the CUDA engines' in-place ones)
//   bias                     when has_bias
//   c                        when has_c
//   output_scale             f32[], when output_scale
// Results: the output (its element type is the dot's output type), then amax (f32[], the max
// |D| before the output scale) when compute_amax.
// Attributes: lhs_contracting, rhs_contracting, lhs_batch, rhs_batch (int64 arrays),
// lhs_precision, rhs_precision, algorithm ("" = none), lhs_scale_mode, rhs_scale_mode
// ("none", "tensor", ...), epilogue ("" = BIAS with a bias, else DEFAULT) (strings), alpha, beta
// (f64), has_bias, has_c, output_scale, compute_amax (bool), lhs_scale_layout, rhs_scale_layout
// (int64 arrays, minor-to-major; empty or absent = row-major), autotune_candidates (int64) and
// autotune_cache (string): the process's autotuning when the call was traced (the CUDA handler
// looks up the plan made then with them; the CPU handler ignores them).
//
// The handlers build the DotSpec with MakeDotSpec, the function the trace-time check in Python
// calls too, so what was checked while tracing is what runs.
// fp8dot_quantize: QuantizeOnCpu / QuantizeOnCuda (fp8dot/quantize.h). Operands: x (a row-major
// f32/bf16/f16 matrix), then up (like x) when the activation is "swiglu", then the given scale
// (f32[]) when given_scale. Results, each when the spec produces it: q, scale, q_t, scale_t, amax
// (f32[]); the FP8 type is q's (or q_t's). Attributes: granularity, scale_layout ("row-major" or
// "column-major": the layout of the 1x128 scale results, as the call declares them to XLA;
// absent = row-major), activation ("none", "swiglu", "gelu"; absent = none) (strings),
// row_major, transposed, given_scale, compute_amax (bool), margin (int64).
#pragma once

#include "xla/ffi/api/c_api.h"

extern "C" {
// The CPU backend's emulation of the accumulation (bit-exact with the H200).
XLA_FFI_Error* Fp8dotScaledDotCpu(XLA_FFI_CallFrame* call_frame);
#ifdef FP8DOT_HAVE_CUDA
// The cached CudaDotPlan on XLA's stream. Command-buffer (CUDA graph) compatible once the plan
// exists: making a plan (autotuning) cannot be captured, so fp8dot.jax makes it while tracing.
XLA_FFI_Error* Fp8dotScaledDotCuda(XLA_FFI_CallFrame* call_frame);
#endif
XLA_FFI_Error* Fp8dotQuantizeCpu(XLA_FFI_CallFrame* call_frame);
#ifdef FP8DOT_HAVE_CUDA
// On XLA's stream; allocates nothing, so always command-buffer compatible.
XLA_FFI_Error* Fp8dotQuantizeCuda(XLA_FFI_CallFrame* call_frame);
#endif
}
