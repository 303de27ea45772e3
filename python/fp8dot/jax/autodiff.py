"""fp8dot.jax.fp8_dot_general: a differentiable FP8 dot_general with a recipe's three GEMMs.

    forward  Y  = X · Wᵀ    recipe.forward  (seed: e4m3 × e4m3, DEFAULT -> fast accumulation)
    dgrad    dX = dY · W    recipe.dgrad    (seed: e5m2 × e4m3, HIGHEST -> promoted)
    wgrad    dW = dYᵀ · X   recipe.wgrad    (seed: e5m2 × e4m3, HIGHEST -> promoted)

Each GEMM is one fp8dot_scaled_dot custom call (ops.py); its accumulation is what
ResolveAccumulation gives the recipe's precision. The operands are brought into the layout
cuBLASLt's FP8 GEMMs read (both contracting dims contiguous) inside the quantisation: X as
[M, K], W as [N, K]; for the gradients dY as [M, N] and [N, M], W as [K, N], X as [K, M] (the
weight gradient is computed in the kernel's layout). W is quantised in the orientation it is
stored in (nn.Dense's kernel is [K, N]): its other orientation comes out of the same pass, so no
bf16 transpose of it is ever written. Each of X, W and dY is quantised for both of its GEMMs at
once (recipe.quantization: in jax.numpy, which XLA fuses, or with fp8dot's kernel, which writes
both orientations from one read), so the backward pass keeps FP8 operands only.

activation="gelu" applies the dot to GELU(x) (tanh form, jax.nn.gelu's default) computed inside
X's quantisation (never written), and differentiates through it as jax.nn.gelu does.

recompute_weight_transpose=True keeps no FP8 copy of W from the forward to the backward: the
forward quantises W's forward orientation alone, and the backward quantises dgrad's Wᵀ again
from W with the forward's scales (the same bytes), as fp8dot.torch.Linear's option does: one
byte per weight element fewer kept between a layer's forward and its backward, for one more read
of W (how much of it XLA's buffer assignment turns into less memory: docs/jax.md).

Delayed scaling keeps Flax's state (scales [1] and amax histories [L] for the input, kernel and
output gradient) and returns the updated state as the state's cotangent, as Flax's
Fp8DirectDotGeneralOp does ('_overwrite_with_gradient'). A state in Flax's
`fp8_ops.fp32_max_grad` (any JAX extended dtype over float32 whose cotangents add by max) stays
in it: the cotangents of a state shared by several calls then combine by their max, not summed.
"""

from __future__ import annotations

import functools
from typing import Mapping, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .._quantize import both_orientations, transposed_only
from ._mesh_typing import cotangent_like
from .amax_reduction import AmaxReduction, global_amax
from .ops import scaled_dot_general
from .quantize import _scale_from_amax, delayed_scale_update, fused_quantize, quantize
from .recipe import Recipe, check_recipe

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


ACTIVATIONS = ("gelu",)


def _activated(x, activation: Optional[str]):
    """x, or the activation the dot applies to it, in jax.numpy (jax.nn.gelu's tanh form)."""
    return x if activation is None else jax.nn.gelu(x, approximate=True)


def fp8_dot_general(x, w, dimension_numbers=None, *, recipe: Optional[Recipe] = None,
                    state: Optional[Mapping] = None, preferred_element_type=None,
                    activation: Optional[str] = None,
                    amax_reduction: Optional[AmaxReduction] = None,
                    recompute_weight_transpose: bool = False):
    """dot_general(x, w) in FP8 by `recipe` (default Recipe.seed()), differentiable in x and w.

    dimension_numbers as jax.lax.dot_general's, without batch dims (x's free dims, then w's, in
    the output); default: x's last dim with w's first, as nn.Dense. With recipe.scaling ==
    "delayed", `state` is the delayed-scaling state (init_delayed_state()); its gradient is the
    updated state. The output has preferred_element_type (default x.dtype).

    activation="gelu": dot_general(GELU(x), w) (tanh form) with GELU computed inside X's FP8
    quantisation (recipe.quantization "kernel"; with "xla" by jax.numpy, which XLA fuses into
    it), so an MLP's hidden activation is never written in x's dtype; x's gradient goes through
    jax.nn.gelu's. Delayed scaling's history then records max |GELU(x)|.

    amax_reduction (inside shard_map): the mesh axes over which x, w and the output's gradient
    are split (fp8dot.jax.AmaxReduction); their tensorwise and delayed-scaling amaxes are
    reduced over them, so every device casts with the whole tensor's scale and the sharded step
    quantises as the unsharded one does (docs/distributed.md). Row and block scales need none.

    recompute_weight_transpose=True: dgrad's Wᵀ is quantised again in the backward pass from w
    itself instead of kept from the forward; the results are the same bit for bit (module doc).
    w's contracting dims must then come first or last (else flattening w copies it, and that
    copy would be kept: refused).
    """
    if activation is not None and activation not in ACTIVATIONS:
        raise ValueError(f"fp8dot.jax.fp8_dot_general: activation {activation!r} is not one of "
                         f"{', '.join(ACTIVATIONS)} (or None)")
    recipe = check_recipe(Recipe.seed() if recipe is None else recipe,
                          "fp8dot.jax.fp8_dot_general")
    for array, name in ((x, "x"), (w, "w")):
        if jnp.dtype(array.dtype) not in _QUANTIZABLE:
            raise TypeError(f"fp8dot.jax.fp8_dot_general: {name} is {jnp.dtype(array.dtype)}; FP8 "
                            "dots quantise float32, bfloat16 or float16 (cast it first)")
    if dimension_numbers is None:
        dimension_numbers = (((x.ndim - 1,), (0,)), ((), ()))
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs_batch or rhs_batch:
        raise NotImplementedError(
            "fp8_dot_general takes dots without batch dimensions (a Dense layer's); use "
            "jax.vmap over it, or scaled_dot_general for a batched scaled dot")
    lhs_contracting, rhs_contracting = tuple(lhs_contracting), tuple(rhs_contracting)
    _check_contracting_dims(x.shape, w.shape, lhs_contracting, rhs_contracting)
    lhs_free = tuple(d for d in range(x.ndim) if d not in lhs_contracting)
    rhs_free = tuple(d for d in range(w.ndim) if d not in rhs_contracting)
    k = int(np.prod([x.shape[d] for d in lhs_contracting]))
    x2 = jnp.transpose(x, lhs_free + lhs_contracting).reshape(-1, k)
    # W as the 2-D matrix its storage already is: [K, N] when the contracting dims come first
    # (nn.Dense), else [N, K] (transposed into it when the dims interleave).
    weight_kn = rhs_contracting + rhs_free == tuple(range(w.ndim)) and bool(rhs_free)
    w2 = (w.reshape(k, -1) if weight_kn
          else jnp.transpose(w, rhs_free + rhs_contracting).reshape(-1, k))
    if recompute_weight_transpose and not weight_kn and rhs_free + rhs_contracting != tuple(
            range(w.ndim)):
        raise ValueError(
            "fp8dot.jax.fp8_dot_general: recompute_weight_transpose=True would keep a transposed "
            f"copy of w in {jnp.dtype(w.dtype)} (its contracting dims {rhs_contracting} "
            f"interleave with its other dims, shape {tuple(w.shape)}), more than the FP8 copy it "
            "saves: pass w with its contracting dims first or last, or keep the transpose")
    out_dtype = jnp.dtype(preferred_element_type or x.dtype)
    if recipe.scaling == "delayed":
        if state is None:
            raise ValueError("recipe.scaling is 'delayed': pass state (init_delayed_state(), or "
                             "fp8dot.flax.DotGeneral, which keeps it)")
        state = _checked_state(tuple(state[name] for name in STATE_NAMES))
    else:
        state = ()
    axes = (AmaxReduction() if amax_reduction is None or recipe.scaling not in
            ("tensorwise", "delayed") else AmaxReduction(*amax_reduction).normalized())
    y2 = _fp8_matmul(recipe, out_dtype, weight_kn, activation, axes,
                     bool(recompute_weight_transpose), x2, w2, state)
    return y2.reshape([x.shape[d] for d in lhs_free] + [w.shape[d] for d in rhs_free])


def _check_contracting_dims(x_shape, w_shape, lhs_contracting, rhs_contracting) -> None:
    """The pairs of contracting dims name dims of x and w, once each, of equal sizes (the
    matrices are formed by flattening them in the order given, which pairs them only then), and
    the dot has a contracting extent and output features to quantise."""
    where = "fp8dot.jax.fp8_dot_general"
    if len(lhs_contracting) != len(rhs_contracting):
        raise ValueError(f"{where}: {len(lhs_contracting)} contracting dims of x "
                         f"{lhs_contracting} but {len(rhs_contracting)} of w {rhs_contracting}")
    for dims, shape, name in ((lhs_contracting, x_shape, "x"), (rhs_contracting, w_shape, "w")):
        if any(not 0 <= d < len(shape) for d in dims) or len(set(dims)) != len(dims):
            raise ValueError(f"{where}: contracting dims {dims} of {name} (shape {tuple(shape)}) "
                             "must be distinct dims in [0, rank)")
    for lhs_dim, rhs_dim in zip(lhs_contracting, rhs_contracting):
        if x_shape[lhs_dim] != w_shape[rhs_dim]:
            raise ValueError(f"{where}: contracting dim {lhs_dim} of x (size {x_shape[lhs_dim]}) "
                             f"and dim {rhs_dim} of w (size {w_shape[rhs_dim]}) differ in size")
    if any(x_shape[d] == 0 for d in lhs_contracting):
        raise ValueError(f"{where}: the contracting extent is 0 (x {tuple(x_shape)}): nothing "
                         "to multiply")
    if any(w_shape[d] == 0 for d in range(len(w_shape)) if d not in rhs_contracting):
        raise ValueError(f"{where}: w {tuple(w_shape)} has no output features")


# What the quantisation reads (an operand of another dtype is refused).
_QUANTIZABLE = (jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))


def _combines_by_max(value) -> bool:
    """Whether a state entry is in an extended dtype (Flax's fp32_max_grad), whose cotangents
    combine by max."""
    dtype = getattr(value, "dtype", None)
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.extended)


def _as_float32(value):
    """A state entry in float32 for the arithmetic: one in an extended dtype over float32 (Flax's
    fp32_max_grad) is converted; any other is taken as it is."""
    return jax.lax.convert_element_type(value, jnp.float32) if _combines_by_max(value) else value


def _state_as_float32(state: tuple) -> tuple:
    return tuple(_as_float32(value) for value in state)


def _checked_state(state: tuple) -> tuple:
    """The state's entries as arrays (a numpy array becomes JAX's, float32 where x64 is off), each
    float32 or an extended dtype over float32; anything else is refused with its name."""
    checked = []
    for name, value in zip(STATE_NAMES, state):
        if _combines_by_max(value):
            if getattr(value.dtype, "float_dtype", None) != jnp.float32:
                raise TypeError(f"fp8dot.jax.fp8_dot_general: delayed-scaling state {name!r} has "
                                f"dtype {value.dtype}; an extended dtype must be over float32 (as "
                                "flax.linen.fp8_ops.fp32_max_grad is)")
        else:
            value = jnp.asarray(value)
            if value.dtype != jnp.float32:
                raise TypeError(f"fp8dot.jax.fp8_dot_general: delayed-scaling state {name!r} has "
                                f"dtype {value.dtype}; it must be float32 or Flax's "
                                "fp32_max_grad")
        checked.append(value)
    return tuple(checked)


def _state_cotangent(new_value, primal):
    """The state's "gradient": its new value (float32) typed as the primal, combined over the
    devices it does not vary over by their max, in the primal's dtype (an extended one's
    cotangents combine by its own rule: fp32_max_grad's is max)."""
    cotangent = cotangent_like(new_value.astype(jnp.float32), _as_float32(primal), jax.lax.pmax)
    if _combines_by_max(primal):
        cotangent = jax.lax.convert_element_type(cotangent, primal.dtype)
    return cotangent


def _delayed(recipe: Recipe, x, dtype, scale, history, axes: tuple):
    """(the scale x is cast with, the state's new scale, its new history). The state evolves as
    Flax's does (delayed_scale_update); where the history holds no amax yet (the first step) the
    cast takes x's own scale, from the amax the history records this step, instead of the
    state's initial 1.0 (which saturated large tensors and flushed small gradients to zero: the
    torch layers and the C++ quantisation fall back the same way)."""
    new_scale, new_history = delayed_scale_update(x, dtype, scale, history, recipe.amax_compute,
                                                  recipe.margin, axes)
    previous = jnp.max(history, axis=0) if recipe.amax_compute == "max" else history[0]
    remembered = (previous > 0.0) & jnp.isfinite(previous)
    own = _scale_from_amax(new_history[0], dtype).astype(new_scale.dtype)
    return jnp.where(remembered, new_scale, own), new_scale, new_history


def _reduced_scales(x, axes: tuple, dtype, transposed_dtype):
    """Current scaling's (scale, transposed dtype's scale) from x's amax over the mesh axes
    (quantize.h's rule, as the quantisation applies it to its own amax); (None, None) without
    axes: the quantisation computes them."""
    if not axes:
        return None, None
    amax = global_amax(x, axes)
    return (_scale_from_amax(amax, dtype),
            None if transposed_dtype == dtype else _scale_from_amax(amax, transposed_dtype))


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4, 5))
def _fp8_matmul(recipe, out_dtype, weight_kn, activation, axes, recompute, x2, w2, state):
    """activation(x2) [M, K] · W -> [M, N], where w2 is W as [K, N] (weight_kn) or as [N, K];
    recompute: dgrad's Wᵀ quantised again in the backward."""
    return _forward(recipe, out_dtype, weight_kn, activation, axes, recompute, x2, w2, state)[0]


def _both_orientations(recipe: Recipe, matrix, granularity: str, dtype, transposed_dtype,
                       scale=None, activation: Optional[str] = None, transposed_scale=None):
    """(q, scale) of matrix [R, C] for a GEMM that contracts C, and (q_t, scale_t) of matrixᵀ for
    one that contracts R, each scale in its own operand's terms. fp8dot's kernel writes both
    from one read; in jax.numpy a transposable scaling (tensor, 128x128) transposes the FP8 copy
    and any other is quantised again. A transpose in another dtype is quantised on its own
    (current scaling). With an activation the matrix quantised is activation(matrix): computed
    by the kernel, or by jax.numpy ahead of the quantisation."""
    if recipe.quantization == "kernel":
        # Scales in the layouts the dots ask XLA for (ops._declared_scale_layouts).
        quantize_fn = (fused_quantize if activation is None
                       else functools.partial(fused_quantize, activation=activation))
        operand, transposed, _ = both_orientations(quantize_fn, matrix, granularity, dtype,
                                                   transposed_dtype, scale,
                                                   transposed_scale=transposed_scale)
        return operand, transposed
    # In jax.numpy the two halves' common quantisation is one computation after XLA's CSE.
    matrix = _activated(matrix, activation)
    return tuple(_one_orientation(recipe, matrix, granularity, dtype, transposed_dtype,
                                  transposed, scale, transposed_scale)
                 for transposed in (False, True))


def _weight_dtypes(recipe: Recipe, weight_kn):
    """(dtype of w2 as stored, of its transpose): dgrad's [K, N] and the forward's [N, K]."""
    return ((recipe.dgrad.rhs_dtype, recipe.forward.rhs_dtype) if weight_kn
            else (recipe.forward.rhs_dtype, recipe.dgrad.rhs_dtype))


def _one_orientation(recipe: Recipe, matrix, granularity: str, dtype, transposed_dtype,
                     transposed: bool, scale=None, transposed_scale=None):
    """One of the two operands _both_orientations(recipe, matrix, granularity, dtype,
    transposed_dtype, scale, transposed_scale=transposed_scale) returns, the same bytes and
    scales, without quantising the other: matrix's own orientation, or (transposed) its
    transpose, which the shared pass casts with `scale` when the dtypes agree."""
    same_dtype = transposed_dtype == dtype
    if recipe.quantization == "kernel":
        if not transposed:
            return both_orientations(fused_quantize, matrix, granularity, dtype, None, scale)[0]
        result = transposed_only(fused_quantize, matrix, granularity, transposed_dtype,
                                 scale=scale if same_dtype else transposed_scale)
        return result.q_t, result.scale_t
    if not transposed:
        return quantize(matrix, dtype, granularity, scale)
    if same_dtype and granularity in ("tensor", "128x128"):
        q, q_scale = quantize(matrix, dtype, granularity, scale)
        return q.T, q_scale.T if granularity == "128x128" else q_scale
    return quantize(matrix.T, transposed_dtype, granularity, transposed_scale)


def _forward(recipe: Recipe, out_dtype, weight_kn, activation, axes: AmaxReduction, recompute,
             x2, w2, state):
    if x2.shape[0] == 0:
        # No rows (an MoE expert that got no tokens): an empty output, nothing quantised. A
        # float32 delayed-scaling state stays as it is (the backward returns it unchanged); an
        # entry whose calls' states combine by max (fp32_max_grad) takes the update an amax of
        # 0 gives for X and dY, which leaves the other calls' updates as they are in the max
        # (an unchanged history would keep old amaxes past their window), and W's own.
        updates = ()
        if any(_combines_by_max(value) for value in state):
            s = _state_as_float32(state)
            zero = jnp.zeros((1, 1), x2.dtype)
            _, input_scale, input_history = _delayed(recipe, zero, recipe.forward.lhs_dtype, s[0],
                                                     s[3], axes.input)
            _, kernel_scale, kernel_history = _delayed(recipe, w2, recipe.forward.rhs_dtype, s[1],
                                                       s[4], axes.weight)
            updates = (input_scale, kernel_scale, input_history, kernel_history)
        n = w2.shape[1] if weight_kn else w2.shape[0]
        return (jnp.zeros((0, n), out_dtype), (x2[:0], w2[:0], None, None, None, state, updates))
    granularity, weight = _GRANULARITY[recipe.scaling]
    config = recipe.forward
    # The transposes the gradients take come out of the same quantisation: the wgrad's Xᵀ
    # [K, M] and the dgrad's Wᵀ [K, N]. W is quantised as stored: [K, N] (weight_kn) first
    # for dgrad, its transpose for the forward; else [N, K] first for the forward.
    weight_dtypes = _weight_dtypes(recipe, weight_kn)
    new_state = ()
    if recipe.scaling == "delayed":
        input_scale, kernel_scale, _, input_history, kernel_history, _ = _state_as_float32(state)
        input_scale, input_state_scale, input_history = _delayed(
            recipe, _activated(x2, activation), config.lhs_dtype, input_scale, input_history,
            axes.input)
        kernel_scale, kernel_state_scale, kernel_history = _delayed(
            recipe, w2, config.rhs_dtype, kernel_scale, kernel_history, axes.weight)
        new_state = (input_state_scale, kernel_state_scale, input_history, kernel_history)
        input_t_scale = kernel_t_scale = None
    else:  # current scaling: the quantisation's own scales, unless they span devices
        input_scale, input_t_scale = _reduced_scales(
            _activated(x2, activation) if axes.input else x2, axes.input, config.lhs_dtype,
            recipe.wgrad.rhs_dtype)
        kernel_scale, kernel_t_scale = _reduced_scales(w2, axes.weight, *weight_dtypes)
    (x_q, x_scale), x_t = _both_orientations(recipe, x2, granularity, config.lhs_dtype,
                                             recipe.wgrad.rhs_dtype, input_scale, activation,
                                             input_t_scale)
    if recompute:
        # The forward's orientation alone: [N, K], w2's transpose when w2 is [K, N]. The
        # backward casts the other from w2 with the same scales (_weight_transpose_again).
        weight_scales = (kernel_scale, kernel_t_scale)
        w_q, w_scale = _one_orientation(recipe, w2, weight, *weight_dtypes, weight_kn,
                                        *weight_scales)
        w_t = None
    else:
        weight_scales = None
        first, second = _both_orientations(recipe, w2, weight, *weight_dtypes, kernel_scale,
                                           transposed_scale=kernel_t_scale)
        (w_q, w_scale), w_t = (second, first) if weight_kn else (first, second)
    y = scaled_dot_general(x_q, w_q, _TN, lhs_scale=x_scale, rhs_scale=_as_rhs(w_scale, weight),
                           precision=config.precision, algorithm=config.algorithm,
                           preferred_element_type=out_dtype)
    # Residuals: FP8 operands only (empty slices of x2 and w2 keep their dtypes and mesh typing
    # for the cotangents), and with an activation x2 itself, which its gradient needs (as an
    # unfused activation keeps it); with recompute, w2 (the parameter itself, which stays alive
    # anyway) and W's scales instead of Wᵀ.
    return y, (x2 if activation else x2[:0], w2 if recompute else w2[:0], x_t, w_t,
               weight_scales, state, new_state)


def _weight_transpose_again(recipe: Recipe, weight_kn, w2, weight_scales, g):
    """dgrad's W operand [K, N] (q, scale), quantised in the backward from w2 with the forward's
    scales: the bytes _forward's shared pass would have kept (w2 itself when it is [K, N], else
    its transpose). The barrier makes the cast wait for g, the output's gradient: it depends on
    parameters only, and XLA's scheduler would otherwise run it at the start of the step and
    hold its result as long as keeping it would have."""
    w2, _ = jax.lax.optimization_barrier((w2, g))
    return _one_orientation(recipe, w2, _GRANULARITY[recipe.scaling][1],
                            *_weight_dtypes(recipe, weight_kn), not weight_kn, *weight_scales)


def _as_rhs(scale, granularity):
    """A scale computed along the rows of a GEMM's rhs stored [N, K], in canonical (K x N) terms:
    128x128 [N/128, K/128] -> [K/128, N/128], 1x128 [N, K/128] -> [K/128, N]."""
    return scale.T if granularity in ("1x128", "128x128") else scale


def _fp8_matmul_forward(recipe, out_dtype, weight_kn, activation, axes, recompute, x2, w2,
                        state):
    return _forward(recipe, out_dtype, weight_kn, activation, axes, recompute, x2, w2, state)


def _fp8_matmul_backward(recipe, out_dtype, weight_kn, activation, axes, recompute, residuals,
                         g):
    x2, w2, x_t, w_t, weight_scales, state, new_state = residuals
    if x_t is None:  # the forward had no rows: zero gradients, the state as _forward says
        n, k = g.shape[1], x2.shape[1]
        dw = jnp.zeros((k, n) if weight_kn else (n, k), w2.dtype)
        values = _state_as_float32(state)
        if new_state:
            _, grad_scale, grad_history = _delayed(recipe, jnp.zeros((1, 1), g.dtype),
                                                   recipe.dgrad.lhs_dtype, values[2], values[5],
                                                   axes.grad_output)
            input_scale, kernel_scale, input_history, kernel_history = new_state
            updated = (input_scale, kernel_scale, grad_scale, input_history, kernel_history,
                       grad_history)
            values = tuple(new if _combines_by_max(primal) else old
                           for new, old, primal in zip(updated, values, state))
        return cotangent_like(jnp.zeros(x2.shape, x2.dtype), x2), cotangent_like(dw, w2), \
            tuple(_state_cotangent(value, primal) for value, primal in zip(values, state))
    if recompute:
        w_t = _weight_transpose_again(recipe, weight_kn, w2, weight_scales, g)
    (xt_q, xt_scale), (wt_q, wt_scale) = x_t, w_t
    granularity, weight = _GRANULARITY[recipe.scaling]
    dgrad, wgrad = recipe.dgrad, recipe.wgrad
    grad_scale = grad_t_scale = None
    if recipe.scaling == "delayed":
        state32 = _state_as_float32(state)
        grad_scale, grad_state_scale, grad_history = _delayed(
            recipe, g, dgrad.lhs_dtype, state32[2], state32[5], axes.grad_output)
    else:
        grad_scale, grad_t_scale = _reduced_scales(g, axes.grad_output, dgrad.lhs_dtype,
                                                   wgrad.lhs_dtype)
    (g_q, g_scale), (gt_q, gt_scale) = _both_orientations(recipe, g, granularity, dgrad.lhs_dtype,
                                                          wgrad.lhs_dtype, grad_scale,
                                                          transposed_scale=grad_t_scale)

    # dgrad: dX [M, K] = dY [M, N] · W, W as [K, N].
    dx = scaled_dot_general(g_q, wt_q, _TN, lhs_scale=g_scale,
                            rhs_scale=_as_rhs(wt_scale, weight), precision=dgrad.precision,
                            algorithm=dgrad.algorithm, preferred_element_type=x2.dtype)

    # wgrad: dW = dYᵀ · X, computed as the kernel's own [K, N] = Xᵀ [K, M] · dY, X as [K, M]
    # and dY as [N, M] (the operands swap sides, and so do their precisions): w2's layout when
    # weight_kn; else returned transposed into w2's [N, K], which XLA folds into the caller's
    # transpose, so the gradient lands in the kernel's layout without a pass over it.
    dw = scaled_dot_general(xt_q, gt_q, _TN, lhs_scale=xt_scale,
                            rhs_scale=_as_rhs(gt_scale, granularity),
                            precision=(wgrad.precision[1], wgrad.precision[0]),
                            algorithm=wgrad.algorithm, preferred_element_type=w2.dtype)
    if not weight_kn:
        dw = dw.T
    if activation is not None:  # dx is the activation's gradient: through it, as jax.nn.gelu
        dx = jax.vjp(lambda v: _activated(v, activation), x2)[1](dx)[0]

    if recipe.scaling == "delayed":
        input_scale, kernel_scale, input_history, kernel_history = new_state
        state_cotangent = (input_scale, kernel_scale, grad_state_scale, input_history,
                           kernel_history, grad_history)
        state_cotangent = tuple(_state_cotangent(c, p) for c, p in zip(state_cotangent, state))
    else:
        state_cotangent = ()
    return cotangent_like(dx, x2), cotangent_like(dw, w2), state_cotangent


_fp8_matmul.defvjp(_fp8_matmul_forward, _fp8_matmul_backward)
