"""Scales that agree across ranks: a tensor's amax reduced (max) over process groups before it
becomes a tensorwise scale.

A tensor that several ranks each hold a part of (the tokens of a data-parallel batch, a
tensor-parallel shard of a weight or activation) has one amax: max |tensor| over all the parts.
Reduced so, every rank casts its part with the scale a single process would give the whole
tensor, and the quantised bytes are that process's. Only tensorwise and delayed scaling need
it; row and block scales are local to a row or block.

The reduction is exact (a max), and the scale comes from it by quantize.h's rule
(`scale_from_amax`), which is what the quantisation kernel computes from its own amax pass.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import torch

from .quantize import scale_from_amax


class AmaxReduction(NamedTuple):
    """The process groups over which each of a layer's tensors' amaxes are reduced: its input X,
    its weight W and the gradient of its output dY (empty: the tensor is whole on this rank)."""

    input: tuple = ()
    weight: tuple = ()
    grad_output: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.input or self.weight or self.grad_output)


def global_amax(tensor: torch.Tensor, groups: tuple) -> torch.Tensor:
    """max |tensor| (float32, a scalar) over every rank of each group, in every rank's call. A
    NaN anywhere gives scale 1 where it lands (scale_from_amax), as the kernel's own rule does."""
    from torch.distributed import _functional_collectives as collectives

    if tensor.numel() == 0:  # a rank with no part of it (an empty FSDP2 shard) joins with 0
        amax = torch.zeros((), dtype=torch.float32, device=tensor.device)
    else:
        amax = torch.linalg.vector_norm(tensor.detach(), float("inf")).float()
    for group in groups:
        # Functional collectives, so that torch.compile traces them into the graph.
        amax = collectives.wait_tensor(collectives.all_reduce(amax, "max", group))
    return amax


class CastScales(NamedTuple):
    """What a tensor's cast is given: `scale` for the quantisation in `dtype` (None: the
    quantisation computes it), `transposed_scale` for a transpose in another dtype, and `amax`,
    the amax over the ranks to record in a delayed-scaling history (None: the cast's own)."""

    scale: Optional[torch.Tensor]
    transposed_scale: Optional[torch.Tensor] = None
    amax: Optional[torch.Tensor] = None


def cast_scales(tensor: torch.Tensor, groups: tuple, dtype: torch.dtype,
                transposed_dtype: Optional[torch.dtype],
                delayed_scale: Optional[torch.Tensor]) -> CastScales:
    """Without groups, the delayed scale if any (the quantisation computes the rest). With
    groups, the scales a single process holding the whole tensor would cast its parts with:
    under delayed scaling the history's scale where it has one, else (its first step) the
    current scale, as the kernel replaces a history scale of 0 by the tensor's own (margin 0);
    the transpose in another dtype with current scaling, as fp8dot._quantize.both_orientations
    casts one."""
    if not groups:
        return CastScales(delayed_scale)
    return scales_for_amax(global_amax(tensor, groups), dtype, transposed_dtype, delayed_scale)


def scales_for_amax(amax: torch.Tensor, dtype: torch.dtype,
                    transposed_dtype: Optional[torch.dtype],
                    delayed_scale: Optional[torch.Tensor]) -> CastScales:
    """cast_scales for a tensor whose amax over the ranks is known already."""
    current = scale_from_amax(amax, dtype)
    scale = current if delayed_scale is None else torch.where(delayed_scale > 0, delayed_scale,
                                                              current)
    transposed = (None if transposed_dtype is None or transposed_dtype == dtype
                  else scale_from_amax(amax, transposed_dtype))
    return CastScales(scale, transposed, amax)
