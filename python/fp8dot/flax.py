"""fp8dot.flax.DotGeneral: a drop-in for Flax's FP8 dot_general modules, run by fp8dot.

    nn.Dense(features, dot_general_cls=fp8dot.flax.DotGeneral)       # as Fp8DirectDotGeneralOp
    nn.Dense(features, dot_general_cls=functools.partial(
        fp8dot.flax.DotGeneral, recipe=fp8dot.jax.Recipe.deepseek_blocks()))

The default is Flax's Fp8DirectDotGeneralOp recipe: delayed scaling with a 1024-step amax
history, e4m3 forward at DEFAULT, e5m2 gradients at HIGHEST, with its state (input/kernel/
output_grad scale and amax_history) in the '_overwrite_with_gradient' collection, which
flax.training.train_state.TrainState.apply_gradients overwrites with its "gradient" (the
updated state; a layer called several times in one step gets the sum of its calls' states,
as with Flax's own modules, unless the step converts the collection to Flax's
fp8_ops.fp32_max_grad before applying the model, which makes them combine by max: docs/jax.md).
Any fp8dot.jax.Recipe can be given, including current (tensorwise) and rowwise
scaling and DeepSeek blocks, which Flax does not have; those keep no state.

activation="gelu" makes the Dense take GELU of its input inside its FP8 cast (tanh form, as
nn.gelu's default), so an MLP's hidden activation is never written in bf16:

    down = nn.Dense(d_model, dot_general_cls=functools.partial(fp8dot.flax.DotGeneral,
                                                                activation="gelu"))
    y = down(up(x))                                     # = nn.Dense(d_model)(nn.gelu(up(x)))

recompute_weight_transpose=True keeps no FP8 copy of the kernel between the forward and the
backward: the backward quantises the dgrad's operand again from the kernel (fp8_dot_general).
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import flax.linen as nn
import jax.numpy as jnp

from .jax.amax_reduction import AmaxReduction
from .jax.autodiff import fp8_dot_general, init_delayed_state
from .jax.recipe import Recipe, check_recipe

OVERWRITE_WITH_GRADIENT = "_overwrite_with_gradient"


class DotGeneral(nn.Module):
    """dot_general(x, kernel, dimension_numbers) in FP8 by `recipe` (see the module doc)."""

    recipe: Optional[Recipe] = None  # None: Recipe.seed("delayed", amax_history_length=...)
    amax_history_length: int = 1024  # Flax's default; used when recipe is None
    activation: Optional[str] = None  # "gelu": the dot of GELU(x) (fp8_dot_general)
    # Inside shard_map: the mesh axes x, kernel and the output's gradient are split over, for
    # scales that agree across devices (fp8dot.jax.AmaxReduction; fp8_dot_general).
    amax_reduction: Optional[AmaxReduction] = None
    # Quantise dgrad's kernel operand again in the backward instead of keeping it from the
    # forward, for one more read of the kernel (what XLA then saves: docs/jax.md).
    recompute_weight_transpose: bool = False

    def resolved_recipe(self) -> Recipe:
        if self.recipe is not None:
            return check_recipe(self.recipe, "fp8dot.flax.DotGeneral")
        return Recipe.seed(scaling="delayed", amax_history_length=self.amax_history_length)

    @nn.compact
    def __call__(self, x, kernel, dimension_numbers, precision: Any = None,
                 preferred_element_type: Any = None):
        if precision is not None:
            warnings.warn("fp8dot.flax.DotGeneral takes each GEMM's precision from its recipe "
                          f"and ignores precision={precision!r}")
        recipe = self.resolved_recipe()
        # As Flax's FP8 ops: the kernel's dtype is the computation's, and the output's.
        x = jnp.asarray(x, kernel.dtype)
        state = None
        if recipe.scaling == "delayed":
            initial = init_delayed_state(recipe.amax_history_length)
            state = {name: self.variable(OVERWRITE_WITH_GRADIENT, name, lambda v=value: v).value
                     for name, value in initial.items()}
        return fp8_dot_general(x, kernel, dimension_numbers, recipe=recipe, state=state,
                               preferred_element_type=preferred_element_type or x.dtype,
                               activation=self.activation,
                               amax_reduction=self.amax_reduction,
                               recompute_weight_transpose=self.recompute_weight_transpose)
