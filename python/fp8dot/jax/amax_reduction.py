"""Scales that agree across devices inside shard_map: which mesh axes each of an FP8 dot's
tensors is split over, so that its tensorwise amax is reduced (jax.lax.pmax) over them and every
device casts its part with the scale the whole tensor would have (fp8dot.torch has the same for
torch.distributed). Row and block scales are local to a row or block and need none.
"""

from __future__ import annotations

from typing import NamedTuple, Union

import jax
import jax.numpy as jnp

Axes = Union[str, tuple]


def _axes(value: Axes) -> tuple:
    return (value,) if isinstance(value, str) else tuple(value)


class AmaxReduction(NamedTuple):
    """The mesh axes (names, inside shard_map) over which each tensor of a dot is split: its
    input X, its weight W, the gradient of its output dY. Data parallelism over "data":
    AmaxReduction(input="data", grad_output="data"). A column-parallel weight over "model":
    weight="model", grad_output="model"; a row-parallel one: input="model", weight="model"."""

    input: Axes = ()
    weight: Axes = ()
    grad_output: Axes = ()

    def normalized(self) -> "AmaxReduction":
        """Every field a tuple of axis names (hashable: a custom VJP's static argument)."""
        return AmaxReduction(_axes(self.input), _axes(self.weight), _axes(self.grad_output))


def global_amax(x, axes: tuple):
    """max |x| in float32 over every device of the axes (x's own without axes)."""
    amax = jnp.max(jnp.abs(x)).astype(jnp.float32)
    return jax.lax.pmax(amax, axes) if axes else amax
