// ConvertRoundTripRemover: replaces convert<wide>(convert<narrow>(x)) by x when x already has the
// wide type, as XLA's algebraic simplifier does under xla_allow_excess_precision (on by default).
//
// That changes results: it skips the rounding to the narrow type. XLA on an H200 removes every
// f32 -> f8 -> f32 round trip of a Flax fp8_ops MLP this way, so XLA computes that model in f32
// without any FP8 (examples/jax/README.md). fp8dot keeps the HLO's semantics by default; `fp8dot
// run --xla-excess-precision` applies this pass first to reproduce XLA's numbers.
#pragma once

#include "fp8dot/hlo/hlo_ir.h"

namespace fp8dot::hlo {

// Returns how many round trips were removed.
StatusOr<int64_t> RemoveConvertRoundTrips(HloModule* module);

}  // namespace fp8dot::hlo
