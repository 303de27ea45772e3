"""fp8dot's torch operators, registered with torch.library.

`torch.ops.fp8dot.scaled_mm` is one scaled FP8 matrix product (tensor, row, 1×128 and 128×128
scales; bf16/f16/f32/FP8 outputs; bias; amax). It has a fake (meta) kernel, so torch.compile traces
it without a graph break, and on CUDA it enqueues a cached cuBLASLt plan on the current stream
without allocating, so a compiled step can be captured in a CUDA graph. The precision pair is an
argument: which accumulation it means is decided in C++ (ResolveAccumulation), nowhere here.
"""

from __future__ import annotations

from typing import Optional

import torch

from .._dot import scaled_dot


@torch.library.custom_op("fp8dot::scaled_mm", mutates_args=())
def scaled_mm(lhs: torch.Tensor, rhs: torch.Tensor, lhs_scale: Optional[torch.Tensor],
              rhs_scale: Optional[torch.Tensor], bias: Optional[torch.Tensor],
              out_scale: Optional[torch.Tensor], out_dtype: torch.dtype, lhs_precision: str,
              rhs_precision: str, compute_amax: bool,
              backend: str) -> tuple[torch.Tensor, torch.Tensor]:
    """D[M,N] = lhs_scale · rhs_scale · (lhs[M,K] · rhs[K,N]) + bias, and max |D| (a 0-d float32
    tensor, empty when compute_amax is False). rhs is typically a weight's transpose view (a
    column-major [K,N]); any dense layout is accepted."""
    result = scaled_dot(lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale, out_dtype=out_dtype,
                        precision=(lhs_precision, rhs_precision), bias=bias, out_scale=out_scale,
                        amax=compute_amax, backend=backend)
    if not compute_amax:
        return result, lhs.new_empty((0,), dtype=torch.float32)
    output, amax = result
    if not isinstance(amax, torch.Tensor):
        amax = torch.tensor(amax, dtype=torch.float32)
    return output, amax


@scaled_mm.register_fake
def _(lhs, rhs, lhs_scale, rhs_scale, bias, out_scale, out_dtype, lhs_precision, rhs_precision,
      compute_amax, backend):
    torch._check(lhs.dim() == 2 and rhs.dim() == 2, lambda: "scaled_mm takes matrices")
    torch._check(lhs.shape[1] == rhs.shape[0],
                 lambda: f"lhs [M,K] {tuple(lhs.shape)} and rhs [K,N] {tuple(rhs.shape)} differ in K")
    output = lhs.new_empty((lhs.shape[0], rhs.shape[1]), dtype=out_dtype)
    amax = lhs.new_empty(() if compute_amax else (0,), dtype=torch.float32)
    return output, amax
