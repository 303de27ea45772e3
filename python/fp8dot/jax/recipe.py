"""fp8dot.recipe.Recipe with JAX's FP8 dtypes (the recipes themselves: fp8dot/recipe.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp

from ..recipe import GEMMS, SCALINGS, GemmConfig, wrong_recipe_error
from ..recipe import Recipe as _Recipe

E4M3 = jnp.float8_e4m3fn
E5M2 = jnp.float8_e5m2

__all__ = ["E4M3", "E5M2", "GEMMS", "SCALINGS", "GemmConfig", "Recipe", "check_recipe"]


QUANTIZATIONS = ("xla", "kernel")


@dataclass(frozen=True)
class Recipe(_Recipe):
    __doc__ = _Recipe.__doc__
    E4M3: ClassVar[Any] = E4M3
    E5M2: ClassVar[Any] = E5M2
    # How operands are quantised: "kernel" with fp8dot's fused kernel (fused_quantize: an
    # operand and its transpose from one read of it), or "xla" in jax.numpy, which XLA fuses
    # into the ops around it. On the H200's MLP block (bench/results/) the kernel was faster
    # with every scaling.
    quantization: str = "kernel"

    def __post_init__(self):
        super().__post_init__()
        if self.quantization not in QUANTIZATIONS:
            raise ValueError(f"quantization {self.quantization!r} is not one of "
                             f"{', '.join(QUANTIZATIONS)}")


def check_recipe(recipe, where: str) -> Recipe:
    """`recipe` if it is an fp8dot.jax.Recipe, else a TypeError that says what was passed (a
    recipe's name, or fp8dot.torch's recipe)."""
    if not isinstance(recipe, Recipe):
        raise wrong_recipe_error(recipe, where, "fp8dot.jax.Recipe")
    return recipe
