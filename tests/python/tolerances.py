"""Error bounds, from the formats and the accumulation mode; none is tuned to pass.

The accumulation bounds are the C++ GPU tests' (tests/cuda/cuda_test_util.h,
AccumulationTolerance): a relative Frobenius error against the exact product of the same FP8
operands. Hopper's FP8 accumulator keeps 13 fraction bits (docs/accumulation-model.md): fast
accumulation over all of K loses up to ~4 ulps of 2^-13 per sqrt(K/32) tensor-core steps;
promoted accumulation adds the accumulator into FP32 every 128 K, so its error does not grow
with K.

The quantisation bound is elementwise and rigorous: rounding x to FP8 with scale s errs by at
most u·|x| (u = 2^-(mantissa bits + 1)) or, in the subnormal range, half the smallest subnormal
times s. For a product of two quantised operands that gives
|Aq·Bq − A·B| ≤ E_A·|B| + |A|·E_B + E_A·E_B elementwise.
"""

import math

import torch

UNIT_ROUNDOFF = {torch.float8_e4m3fn: 2.0 ** -4, torch.float8_e5m2: 2.0 ** -3,
                 torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11, torch.float32: 2.0 ** -24}
HALF_SMALLEST_SUBNORMAL = {torch.float8_e4m3fn: 2.0 ** -10, torch.float8_e5m2: 2.0 ** -17}


def accumulation_tolerance(accumulation: str, k: int) -> float:
    if accumulation == "fp8-fast":
        return 4.0 * 2.0 ** -13 * math.sqrt(max(1.0, k / 32.0))
    if accumulation == "fp8-promoted":
        return 8.0 * 2.0 ** -13
    return 16.0 * 2.0 ** -24 * math.sqrt(k)


def requantisation_tolerance(difference: float, dtype: torch.dtype) -> float:
    """Relative Frobenius change of a cast to FP8 `dtype` when the tensor cast differs by a
    relative `difference` (float32 sums met in another order): an element rounds the other way,
    by one FP8 step (2u), only where it lay within that difference of a rounding boundary, a
    fraction of about 2·difference/u of them, so about 2·sqrt(difference·u) in all. The
    expected size of such flips, not a worst case (every element could flip)."""
    return 2.0 * math.sqrt(difference * UNIT_ROUNDOFF[dtype])


def output_rounding(dtype: torch.dtype) -> float:
    return 1.1 * UNIT_ROUNDOFF[dtype]


def relative_frobenius(actual: torch.Tensor, expected: torch.Tensor) -> float:
    actual, expected = actual.double().cpu(), expected.double().cpu()
    return ((actual - expected).norm() / expected.norm()).item()


def quantisation_error_bound(x: torch.Tensor, dtype: torch.dtype,
                             scale: torch.Tensor) -> torch.Tensor:
    """Elementwise bound on |dequantised(x) − x| for x quantised with (broadcast) scale."""
    return UNIT_ROUNDOFF[dtype] * x.double().abs() + HALF_SMALLEST_SUBNORMAL[dtype] * scale.double()
