"""fp8dot.recipe.Recipe with torch's FP8 dtypes (the recipes themselves: fp8dot/recipe.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from ..recipe import GEMMS, SCALINGS, GemmConfig, short_dtype_name, wrong_recipe_error
from ..recipe import Recipe as _Recipe

E4M3 = torch.float8_e4m3fn
E5M2 = torch.float8_e5m2

__all__ = ["E4M3", "E5M2", "GEMMS", "SCALINGS", "GemmConfig", "Recipe", "check_recipe",
           "short_dtype_name"]


@dataclass(frozen=True)
class Recipe(_Recipe):
    __doc__ = _Recipe.__doc__
    E4M3: ClassVar[torch.dtype] = E4M3
    E5M2: ClassVar[torch.dtype] = E5M2


def check_recipe(recipe, where: str) -> _Recipe:
    """`recipe` if it is a recipe with torch's FP8 dtypes (fp8dot.torch.Recipe), else a
    TypeError that says what was passed (a recipe's name, or fp8dot.jax's recipe)."""
    if not isinstance(recipe, _Recipe) or not isinstance(recipe.forward.lhs_dtype, torch.dtype):
        raise wrong_recipe_error(recipe, where, "fp8dot.torch.Recipe")
    return recipe
