"""fp8dot for JAX: scaled FP8 dots inside jax.jit, with the seed's fprop/bprop rule.

    import fp8dot.jax as fj
    y = fj.scaled_dot_general(a, b, (((1,), (0,)), ((), ())), lhs_scale=sa, rhs_scale=sb,
                              precision="DEFAULT", preferred_element_type=jnp.bfloat16)
    y = fj.fp8_dot_general(x, w, dimension_numbers, recipe=fj.Recipe.seed())  # differentiable

scaled_dot_general is one XLA custom call (the FFI target fp8dot_scaled_dot); fp8_dot_general
quantises its operands and differentiates with a custom VJP whose three GEMMs take the recipe's
formats and precisions (forward DEFAULT -> fast accumulation, gradients HIGHEST -> promoted, by
ResolveAccumulation). fp8dot.flax.DotGeneral is the Flax drop-in. explain(fn, *args) lists the
FP8 GEMMs of a jitted function with their resolved accumulation.
"""

from __future__ import annotations

try:
    import jax  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError("fp8dot.jax needs JAX: pip install jax (the CPU build is enough to run "
                      "fp8dot's CPU backend)") from error

from .amax_reduction import AmaxReduction
from .autodiff import STATE_NAMES, fp8_dot_general, init_delayed_state
from .explain import Fp8Gemm, explain, gemms
from .ops import scaled_dot_general
from .quantize import delayed_scale_update, quantize
from .recipe import E4M3, E5M2, GemmConfig, Recipe

__all__ = ["AmaxReduction", "E4M3", "E5M2", "Fp8Gemm", "GemmConfig", "Recipe", "STATE_NAMES",
           "delayed_scale_update", "explain", "fp8_dot_general", "gemms", "init_delayed_state",
           "quantize", "scaled_dot_general"]
