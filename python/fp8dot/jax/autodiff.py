"""fp8dot.jax.fp8_dot_general: a differentiable FP8 dot_general with a recipe's three GEMMs.

    forward  Y  = X · Wᵀ    recipe.forward  (seed: e4m3 × e4m3, DEFAULT -> fast accumulation)
    dgrad    dX = dY · W    recipe.dgrad    (seed: e5m2 × e4m3, HIGHEST -> promoted)
    wgrad    dW = dYᵀ · X   recipe.wgrad    (seed: e5m2 × e4m3, HIGHEST -> promoted)

Each GEMM is one fp8dot_scaled_dot custom call (ops.py); its accumulation is what
ResolveAccumulation gives the recipe's precision. The operands are brought into the layout
cuBLASLt's FP8 GEMMs read (both contracting dims contiguous) inside the quantisation, which XLA
fuses: X as [M, K], W as [N, K]; for the gradients dY as [M, N] and [N, M], W as [K, N], X as
[K, M] (the weight gradient is computed in the kernel's layout). An FP8 operand whose scaling survives a transpose (tensor scales, 128×128 blocks) is
transposed in FP8 instead of quantised again.

Delayed scaling keeps Flax's state (scales [1] and amax histories [L] for the input, kernel and
output gradient) and returns the updated state as the state's cotangent, as Flax's
Fp8DirectDotGeneralOp does ('_overwrite_with_gradient').
"""

from __future__ import annotations

import functools
from typing import Mapping, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .ops import scaled_dot_general
from .quantize import delayed_scale_update, quantize
from .recipe import Recipe

STATE_NAMES = ("input_scale", "kernel_scale", "output_grad_scale", "input_amax_history",
               "kernel_amax_history", "output_grad_amax_history")

# Contract dim 1 of both operands: [M, K] x [N, K] -> [M, N].
_TN = (((1,), (1,)), ((), ()))

# Per scaling: the granularity of (activation or gradient, weight) operands.
_GRANULARITY = {"tensorwise": ("tensor", "tensor"), "delayed": ("tensor", "tensor"),
                "rowwise": ("row", "row"), "blocks": ("1x128", "128x128")}


def init_delayed_state(history_length: int = 1024) -> dict:
    """The state of delayed scaling, as Flax's Fp8DotGeneralBase initialises it."""
    scale = jnp.ones((1,), jnp.float32)
    history = jnp.zeros((history_length,), jnp.float32)
    return {name: (scale if name.endswith("scale") else history) for name in STATE_NAMES}


def fp8_dot_general(x, w, dimension_numbers=None, *, recipe: Optional[Recipe] = None,
                    state: Optional[Mapping] = None, preferred_element_type=None):
    """dot_general(x, w) in FP8 by `recipe` (default Recipe.seed()), differentiable in x and w.

    dimension_numbers as jax.lax.dot_general's, without batch dims (x's free dims, then w's, in
    the output); default: x's last dim with w's first, as nn.Dense. With recipe.scaling ==
    "delayed", `state` is the delayed-scaling state (init_delayed_state()); its gradient is the
    updated state. The output has preferred_element_type (default x.dtype).
    """
    recipe = Recipe.seed() if recipe is None else recipe
    if dimension_numbers is None:
        dimension_numbers = (((x.ndim - 1,), (0,)), ((), ()))
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs_batch or rhs_batch:
        raise NotImplementedError(
            "fp8_dot_general takes dots without batch dimensions (a Dense layer's); use "
            "jax.vmap over it, or scaled_dot_general for a batched scaled dot")
    lhs_contracting, rhs_contracting = tuple(lhs_contracting), tuple(rhs_contracting)
    lhs_free = tuple(d for d in range(x.ndim) if d not in lhs_contracting)
    rhs_free = tuple(d for d in range(w.ndim) if d not in rhs_contracting)
    k = int(np.prod([x.shape[d] for d in lhs_contracting]))
    x2 = jnp.transpose(x, lhs_free + lhs_contracting).reshape(-1, k)
    w2 = jnp.transpose(w, rhs_free + rhs_contracting).reshape(-1, k)
    out_dtype = jnp.dtype(preferred_element_type or x.dtype)
    if recipe.scaling == "delayed":
        if state is None:
            raise ValueError("recipe.scaling is 'delayed': pass state (init_delayed_state(), or "
                             "fp8dot.flax.DotGeneral, which keeps it)")
        state = tuple(state[name] for name in STATE_NAMES)
    else:
        state = ()
    y2 = _fp8_matmul(recipe, out_dtype, x2, w2, state)
    return y2.reshape([x.shape[d] for d in lhs_free] + [w.shape[d] for d in rhs_free])


def _delayed(recipe: Recipe, x, dtype, scale, history):
    return delayed_scale_update(x, dtype, scale, history, recipe.amax_compute, recipe.margin)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _fp8_matmul(recipe, out_dtype, x2, w2, state):
    return _forward(recipe, out_dtype, x2, w2, state)[0]


def _forward(recipe: Recipe, out_dtype, x2, w2, state):
    activation, weight = _GRANULARITY[recipe.scaling]
    config = recipe.forward
    if recipe.scaling == "delayed":
        input_scale, kernel_scale, _, input_history, kernel_history, _ = state
        input_scale, input_history = _delayed(recipe, x2, config.lhs_dtype, input_scale,
                                              input_history)
        kernel_scale, kernel_history = _delayed(recipe, w2, config.rhs_dtype, kernel_scale,
                                                kernel_history)
        x_q, x_scale = quantize(x2, config.lhs_dtype, "tensor", input_scale)
        w_q, w_scale = quantize(w2, config.rhs_dtype, "tensor", kernel_scale)
        new_state = (input_scale, kernel_scale, input_history, kernel_history)
    else:
        x_q, x_scale = quantize(x2, config.lhs_dtype, activation)
        w_q, w_scale = quantize(w2, config.rhs_dtype, weight)
        new_state = ()
    y = scaled_dot_general(x_q, w_q, _TN, lhs_scale=x_scale, rhs_scale=_as_rhs(w_scale, weight),
                           precision=config.precision, algorithm=config.algorithm,
                           preferred_element_type=out_dtype)
    # Residuals: an FP8 operand the gradients reuse, or else the high-precision one they
    # quantise again; never both (an empty slice keeps the other's dtype and mesh typing).
    keep_x_q, keep_w_q = _reuses_x_q(recipe), _reuses_w_q(recipe)
    return y, (x2[:0] if keep_x_q else x2, w2[:0] if keep_w_q else w2,
               (x_q, x_scale) if keep_x_q else None, (w_q, w_scale) if keep_w_q else None,
               state, new_state)


def _reuses_x_q(recipe: Recipe) -> bool:
    """The wgrad takes the forward's FP8 X, transposed: its scaling survives a transpose."""
    activation, _ = _GRANULARITY[recipe.scaling]
    return activation == "tensor" and recipe.wgrad.rhs_dtype == recipe.forward.lhs_dtype


def _reuses_w_q(recipe: Recipe) -> bool:
    """The dgrad takes the forward's FP8 W, transposed (tensor scales, 128x128 blocks)."""
    _, weight = _GRANULARITY[recipe.scaling]
    return weight in ("tensor", "128x128") and recipe.dgrad.rhs_dtype == recipe.forward.rhs_dtype


def _as_rhs(scale, granularity):
    """A scale computed along the rows of a GEMM's rhs stored [N, K], in canonical (K x N) terms:
    128x128 [N/128, K/128] -> [K/128, N/128], 1x128 [N, K/128] -> [K/128, N]."""
    return scale.T if granularity in ("1x128", "128x128") else scale


def _fp8_matmul_forward(recipe, out_dtype, x2, w2, state):
    return _forward(recipe, out_dtype, x2, w2, state)


def _fp8_matmul_backward(recipe, out_dtype, residuals, g):
    x2, w2, x_quantised, w_quantised, state, new_state = residuals
    activation, weight = _GRANULARITY[recipe.scaling]
    dgrad, wgrad = recipe.dgrad, recipe.wgrad
    if recipe.scaling == "delayed":
        grad_scale, grad_history = _delayed(recipe, g, dgrad.lhs_dtype, state[2], state[5])
        g_q, g_scale = quantize(g, dgrad.lhs_dtype, "tensor", grad_scale)
    else:
        g_q, g_scale = quantize(g, dgrad.lhs_dtype, activation)

    # dgrad: dX [M, K] = dY [M, N] · W, W as [K, N].
    if w_quantised is not None:
        w_q, w_scale = w_quantised
        wt_q, wt_scale = w_q.T, w_scale  # 128x128 blocks: [N/128, K/128] is the dgrad's [K', N']
    else:
        wt_q, wt_scale = quantize(w2.T, dgrad.rhs_dtype, weight)
        wt_scale = _as_rhs(wt_scale, weight)
    dx = scaled_dot_general(g_q, wt_q, _TN, lhs_scale=g_scale, rhs_scale=wt_scale,
                            precision=dgrad.precision, algorithm=dgrad.algorithm,
                            preferred_element_type=x2.dtype)

    # wgrad: dW = dYᵀ · X, computed as the kernel's own [K, N] = Xᵀ [K, M] · dY, X as [K, M]
    # and dY as [N, M] (the operands swap sides, and so do their precisions), then returned
    # transposed into w2's [N, K]: XLA folds that transpose into the caller's, so the gradient
    # lands in the kernel's layout without a pass over it.
    if activation == "tensor" and wgrad.lhs_dtype == dgrad.lhs_dtype:
        gt_q, gt_scale = g_q.T, g_scale
    else:
        gt_q, gt_scale = quantize(g.T, wgrad.lhs_dtype, activation)
        gt_scale = _as_rhs(gt_scale, activation)
    if x_quantised is not None:
        x_q, x_scale = x_quantised
        xt_q, xt_scale = x_q.T, x_scale
    else:
        xt_q, xt_scale = quantize(x2.T, wgrad.rhs_dtype, activation)
    dw = scaled_dot_general(xt_q, gt_q, _TN, lhs_scale=xt_scale, rhs_scale=gt_scale,
                            precision=(wgrad.precision[1], wgrad.precision[0]),
                            algorithm=wgrad.algorithm, preferred_element_type=w2.dtype).T

    if recipe.scaling == "delayed":
        input_scale, kernel_scale, input_history, kernel_history = new_state
        state_cotangent = (input_scale, kernel_scale, grad_scale, input_history, kernel_history,
                           grad_history)
        state_cotangent = tuple(_typed_like(c, p) for c, p in zip(state_cotangent, state))
    else:
        state_cotangent = ()
    return _typed_like(dx, x2), _typed_like(dw, w2), state_cotangent


def _typed_like(cotangent, primal):
    """Under shard_map, a cotangent must vary over the mesh axes its primal varies over; the
    custom call's results carry no such type, so they are cast (no data moves)."""
    missing = tuple(sorted(_varying_axes(primal) - _varying_axes(cotangent)))
    return jax.lax.pcast(cotangent, missing, to="varying") if missing else cotangent


def _varying_axes(x) -> frozenset:
    """The manual mesh axes x varies over (its aval's ManualAxisType; none outside shard_map)."""
    typeof = getattr(jax, "typeof", None)
    manual = getattr(typeof(x), "mat", None) if typeof is not None else None
    return frozenset(getattr(manual, "varying", ()))


_fp8_matmul.defvjp(_fp8_matmul_forward, _fp8_matmul_backward)
