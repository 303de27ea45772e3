"""The mesh typing of fp8dot's custom calls under shard_map.

Inside shard_map (with JAX's default check_vma), every value is typed by the manual mesh axes it
varies over. An XLA custom call's results carry no such type: they would be taken as the same
on every device, and where they meet a varying value JAX inserts a cast whose transpose is a
psum, so gradients flowing back through it came out summed over the devices. fp8dot's calls
therefore type their results as varying over every axis an operand varies over (a cast, no data
moves), as jax.numpy's own ops do.
"""

from __future__ import annotations

import jax


def varying_axes(x) -> frozenset:
    """The manual mesh axes x varies over (none outside shard_map, or for a Python value)."""
    typeof = getattr(jax, "typeof", None)
    if typeof is None or x is None:
        return frozenset()
    try:
        aval = typeof(x)
    except TypeError:
        return frozenset()
    return frozenset(getattr(aval, "vma", ()) or getattr(getattr(aval, "mat", None), "varying",
                                                         ()))


def vary_like(value, *operands):
    """value typed as varying over every axis any operand varies over."""
    wanted = frozenset().union(*(varying_axes(operand) for operand in operands))
    missing = tuple(sorted(wanted - varying_axes(value)))
    return jax.lax.pcast(value, missing, to="varying") if missing else value


def cotangent_like(cotangent, primal, reduce=jax.lax.psum):
    """A custom VJP's cotangent typed as its primal: summed over the axes the primal does not
    vary over (the primal is the same on every device there, so its gradient is every device's
    contribution: the transpose of the cast that made it varying), cast to vary over the axes
    it does. `reduce=jax.lax.pmax` for a delayed-scaling state's "gradient" (its new amaxes and
    scales), whose devices' values combine by their max."""
    primal_axes, cotangent_axes = varying_axes(primal), varying_axes(cotangent)
    reduced = tuple(sorted(cotangent_axes - primal_axes))
    if reduced:
        cotangent = reduce(cotangent, reduced)
    return vary_like(cotangent, primal)
