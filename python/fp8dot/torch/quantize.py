"""Quantisation to FP8 for torch tensors, through the fused op torch.ops.fp8dot.quantize.

`quantize` returns fp8dot.Quantized: q (and, in the same pass, q_t = the quantised transpose)
with the float32 *dequantisation* scales fp8dot's scaled_mm multiplies back in (x ≈ q · scale),
each in its operand's terms (fp8dot.scaled_dot's docstring has the table). On the GPU it is one
CUDA kernel that reads x once (twice for tensor and row scales of this x: an amax pass first);
on the CPU the C++ reference gives the same bytes. torch.compile sees one opaque op.

The scale maps the amax to the FP8 type's largest finite value; an all-zero group gets scale 1
(any scale is exact there), never a division by zero (include/fp8dot/quantize.h has the rule).
"""

from __future__ import annotations

from typing import Optional

import torch

from .._quantize import Quantized, shared_transposed_scale
from . import ops  # noqa: F401  (registers torch.ops.fp8dot)

BLOCK = 128  # the block edge of DeepSeek-style block scales


def fp8_max(dtype: torch.dtype) -> float:
    return float(torch.finfo(dtype).max)


def scale_from_amax(amax: torch.Tensor, dtype: torch.dtype, margin: int = 0) -> torch.Tensor:
    """The dequantisation scale that maps amax · 2^margin to the type's largest value: quantize.h's
    rule (f32 amax · 2^margin / max, correctly rounded), for scales that come from an amax history
    rather than from the tensor.

    amax · 2^margin is the f32 product, as in C++; the quotient is taken in float64 and rounded
    to float32 once. (On the GPU torch divides by a Python number as a multiplication by its
    reciprocal, which misses the correctly rounded f32 quotient now and then.) Both FP8 maxima
    are 7 · 2^k, so an inexact quotient repeats a 3-bit pattern forever: it never lies within a
    few float64 ulps of an f32 rounding boundary, and the rounding to f32 is the correct one."""
    amax = amax.float()
    scale = ((amax * (2.0 ** margin)).double() / fp8_max(dtype)).float()
    return torch.where(amax > 0, scale, torch.ones_like(scale))


def quantize(x: torch.Tensor, dtype: torch.dtype, granularity: str = "tensor", *,
             row_major: bool = True, transposed: bool = False,
             scale: Optional[torch.Tensor] = None, margin: int = 0,
             amax: bool = False, scale_layout: str = "row-major",
             up: Optional[torch.Tensor] = None, activation: Optional[str] = None) -> Quantized:
    """fp8dot.quantize for torch, as a torch.library op (compiles without a graph break).
    activation="gelu" quantises GELU(x) (tanh form), up= SiLU(x) · up, instead of x, never
    writing the activation (fp8dot.quantize)."""
    x = x.contiguous()
    if up is not None:
        up = up.contiguous()
    outputs = torch.ops.fp8dot.quantize.default(x, dtype, granularity, row_major, transposed,
                                                scale, margin, amax, scale_layout, up,
                                                activation or "")
    # The op returns empty tensors for what it does not produce.
    present = (row_major, True, transposed, transposed and granularity in ("row", "1x128"), amax)
    outputs = Quantized(*[t if wanted else None for t, wanted in zip(outputs, present)])
    return shared_transposed_scale(outputs, granularity)


def quantize_tensorwise(x: torch.Tensor, dtype: torch.dtype,
                        scale: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale for the whole tensor (current scaling, or the given delayed-scaling scale)."""
    result = quantize(x, dtype, "tensor", scale=scale)
    return result.q, result.scale


def quantize_rowwise(x: torch.Tensor, dtype: torch.dtype,
                     reduce_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale per slice along `reduce_dim` (the GEMM's contracting dim) of a matrix: for
    reduce_dim=1 a [rows] scale (a lhs's per-row scale), for reduce_dim=0 a [columns] scale (a
    rhs's per-column scale)."""
    if reduce_dim == 1:
        result = quantize(x, dtype, "row")
        return result.q, result.scale
    if reduce_dim != 0:
        raise ValueError(f"reduce_dim must be 0 or 1 for a matrix, got {reduce_dim}")
    result = quantize(x, dtype, "row", row_major=False, transposed=True)
    return result.q_t.t().contiguous(), result.scale_t


def quantize_blocks(x: torch.Tensor, dtype: torch.dtype, block_rows: int,
                    block_cols: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale per block_rows × block_cols block of a matrix: scale shape [⌈rows /
    block_rows⌉, ⌈cols / block_cols⌉] (a partial last block takes the amax of what it has).
    1×128 blocks of a [M, K] lhs give its [M, K/128] scale; 128×128 blocks of a weight give
    [N/128, K/128]."""
    if (block_rows, block_cols) not in ((1, BLOCK), (BLOCK, BLOCK)):
        raise ValueError(f"block scaling is 1x128 or 128x128, got {block_rows}x{block_cols}")
    result = quantize(x, dtype, f"{block_rows}x{block_cols}")
    return result.q, result.scale
