"""fp8dot.recipe.Recipe with torch's FP8 dtypes (the recipes themselves: fp8dot/recipe.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from ..recipe import GEMMS, SCALINGS, GemmConfig, short_dtype_name
from ..recipe import Recipe as _Recipe

E4M3 = torch.float8_e4m3fn
E5M2 = torch.float8_e5m2

__all__ = ["E4M3", "E5M2", "GEMMS", "SCALINGS", "GemmConfig", "Recipe", "short_dtype_name"]


TENSOR_AMAXES = ("kernel", "torch")


@dataclass(frozen=True)
class Recipe(_Recipe):
    __doc__ = _Recipe.__doc__
    E4M3: ClassVar[torch.dtype] = E4M3
    E5M2: ClassVar[torch.dtype] = E5M2
    # Tensorwise scaling: where each tensor's amax comes from. "kernel": fp8dot's quantisation
    # kernel reads the tensor twice, an amax pass, then the cast. "torch": a torch reduction
    # (`x.abs().amax()`), which torch.compile can fuse into the op that produced the tensor, and
    # one pass of the kernel with that scale. The scales are the same (quantize.h's rule); which
    # is faster under torch.compile has not been measured yet.
    tensor_amax: str = "kernel"

    def __post_init__(self):
        super().__post_init__()
        if self.tensor_amax not in TENSOR_AMAXES:
            raise ValueError(f"tensor_amax {self.tensor_amax!r} is not one of "
                             f"{', '.join(TENSOR_AMAXES)}")
        if self.tensor_amax == "torch" and self.scaling != "tensorwise":
            raise ValueError(f"tensor_amax='torch' applies to tensorwise scaling; scaling "
                             f"{self.scaling!r} takes its scales elsewhere")
