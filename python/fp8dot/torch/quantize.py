"""Quantisation to FP8 with the scale granularities fp8dot's GEMMs take.

Each function returns (q, scale): q in the FP8 type and the float32 *dequantisation* scale that
fp8dot's scaled_mm multiplies back in (x ≈ q · scale), with the scale's shape in the GEMM
operand's terms (fp8dot.scaled_dot's docstring has the table). They are plain torch code, so
torch.compile fuses each into one kernel that reads x once for the amax and once for the cast
(twice in all: current scaling needs the amax before the first cast).

The scale maps the amax to the FP8 type's largest finite value; an all-zero tensor gets scale 1
(any scale is exact there), never a division by zero.
"""

from __future__ import annotations

from typing import Optional

import torch

BLOCK = 128  # the block edge of DeepSeek-style block scales


def fp8_max(dtype: torch.dtype) -> float:
    return float(torch.finfo(dtype).max)


def scale_from_amax(amax: torch.Tensor, dtype: torch.dtype, margin: int = 0) -> torch.Tensor:
    """The dequantisation scale that maps amax · 2^margin to the type's largest value."""
    amax = amax.float()
    scale = amax * (2.0 ** margin) / fp8_max(dtype)
    return torch.where(amax > 0, scale, torch.ones_like(scale))


def cast_to_fp8(x: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x / scale, saturated to the type's range (torch's cast would give NaN for e4m3fn)."""
    limit = fp8_max(dtype)
    return (x.float() / scale).clamp(-limit, limit).to(dtype)


def quantize_tensorwise(x: torch.Tensor, dtype: torch.dtype,
                        scale: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale for the whole tensor (current scaling, or the given delayed-scaling scale)."""
    if scale is None:
        scale = scale_from_amax(x.abs().amax(), dtype)
    return cast_to_fp8(x, scale, dtype), scale


def quantize_rowwise(x: torch.Tensor, dtype: torch.dtype,
                     reduce_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale per slice along `reduce_dim` (the GEMM's contracting dim) of a matrix: for
    reduce_dim=1 a [rows] scale (a lhs's per-row scale), for reduce_dim=0 a [columns] scale (a
    rhs's per-column scale)."""
    amax = x.abs().amax(dim=reduce_dim, keepdim=True)
    scale = scale_from_amax(amax, dtype)
    return cast_to_fp8(x, scale, dtype), scale.squeeze(reduce_dim)


def quantize_blocks(x: torch.Tensor, dtype: torch.dtype, block_rows: int,
                    block_cols: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale per block_rows × block_cols block of a matrix whose dims are multiples of the
    block: scale shape [rows / block_rows, cols / block_cols]. 1×128 blocks of a [M, K] lhs give
    its [M, K/128] scale; 128×128 blocks of a weight give [N/128, K/128]."""
    rows, cols = x.shape
    if rows % block_rows or cols % block_cols:
        raise ValueError(f"block scaling {block_rows}x{block_cols} needs dims that are multiples "
                         f"of the block, got {tuple(x.shape)}")
    blocks = x.float().reshape(rows // block_rows, block_rows, cols // block_cols, block_cols)
    amax = blocks.abs().amax(dim=(1, 3), keepdim=True)
    scale = scale_from_amax(amax, dtype)
    limit = fp8_max(dtype)
    q = (blocks / scale).clamp(-limit, limit).to(dtype).reshape(rows, cols)
    return q, scale.reshape(rows // block_rows, cols // block_cols)
