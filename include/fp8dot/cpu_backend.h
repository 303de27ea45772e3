// The CPU backend: three ways to compute a scaled dot on the host.
//
//   ReferenceDot  the definition of correct: exact products, f64 sums (per 128-block when block
//                 scaled), f64 epilogue. Every other backend is tested against it.
//   BlasDot       fast path: upcast to f32 (f64 for f64 operands), apply scales, call the BLAS
//                 (OpenBLAS, threaded). Its accumulation is f32 whatever the mode: it models the
//                 promoted/FP32 modes, not fast accumulation or TF32 rounding.
//   EmulatedDot   models the accumulation the resolved mode performs on Hopper, including the
//                 FP8 fast accumulator (docs/accumulation-model.md). Slow; for accuracy studies.
//
// All three validate the spec and the arguments and return a clear error instead of crashing.
#pragma once

#include "fp8dot/accumulator_model.h"
#include "fp8dot/dot_arguments.h"
#include "fp8dot/quantize.h"

namespace fp8dot {

StatusOr<DotResult> ReferenceDot(const DotSpec& spec, const DotArguments& arguments);
// D before the output conversion and scale_d (f64, row-major, dims CanonicalDot::output_dims):
// what every backend's output is compared against.
StatusOr<HostTensor> ReferenceDotExact(const DotSpec& spec, const DotArguments& arguments);

StatusOr<DotResult> BlasDot(const DotSpec& spec, const DotArguments& arguments);

StatusOr<DotResult> EmulatedDot(const DotSpec& spec, const DotArguments& arguments,
                                const Fp8AccumulatorModel& model = Fp8AccumulatorModel());

// Quantisation on host pointers (quantize.h): the reference every other backend equals bit for
// bit.
Status QuantizeOnCpu(const QuantizeSpec& spec, const QuantizeBuffers& buffers);

}  // namespace fp8dot
