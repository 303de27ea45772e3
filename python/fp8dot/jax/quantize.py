"""Quantisation to FP8 in jax.numpy, which XLA fuses into the ops around it.

Every function works on a 2-D array [R, C] whose contracting dimension is C (the K-contiguous
layout cuBLASLt's FP8 GEMMs read) and returns (x_q, scale) with x ≈ x_q · scale:

    granularity  scale shape       use
    tensor       []                tensorwise (current) scaling
    row          [R]               rowwise: one scale per row along the contracting dim
    1x128        [R, ⌈C/128⌉]      DeepSeek-V3 activations and gradients
    128x128      [⌈R/128⌉, ⌈C/128⌉] DeepSeek-V3 weights

Scales are amax / fp8_max (1 where the amax is 0), so no value overflows the format; a partial
last block takes the amax of the elements it has.

fused_quantize does the same through fp8dot's CUDA kernel (one custom call that also writes the
transposed FP8 copy a backward GEMM needs); which one is faster depends on what XLA can fuse
around it, so fp8dot.jax.Recipe(quantization=...) chooses.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._quantize import Quantized, make_quantizer, shared_transposed_scale
from . import _ffi
from ._exact_float import divide_by_fp8_max, reciprocal
from ._mesh_typing import vary_like
from .amax_reduction import global_amax
from .ops import _description

GRANULARITIES = ("tensor", "row", "1x128", "128x128")


def fp8_max(dtype) -> float:
    return float(jnp.finfo(dtype).max)


def _scale_from_amax(amax, dtype):
    """amax / fp8_max correctly rounded to f32 (quantize.h's rule; 1 where amax is 0)."""
    amax = amax.astype(jnp.float32)
    return jnp.where(amax > 0, divide_by_fp8_max(amax, fp8_max(dtype)), 1.0).astype(jnp.float32)


def _inverse(scale):
    """1 / scale, correctly rounded, once per scale: the barrier keeps XLA from fusing the
    integer long division into the cast, where it would run once per element."""
    return jax.lax.optimization_barrier(reciprocal(scale))


def _cast(x, inverse_scale, dtype):
    limit = fp8_max(dtype)
    # x · (1 / scale): fp8dot's quantisation rule (include/fp8dot/quantize.h).
    return jnp.clip(x * inverse_scale, -limit, limit).astype(dtype)


def quantize(x, dtype, granularity: str = "tensor", scale=None):
    """(x_q, scale) for a 2-D x; a given tensor `scale` (delayed scaling) is used as it is."""
    if x.ndim != 2:
        raise ValueError(f"quantize takes a 2-D array [rows, contracting], got shape {x.shape}")
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity {granularity!r} is not one of {', '.join(GRANULARITIES)}")
    rows, columns = x.shape
    x = x.astype(jnp.float32)
    if granularity == "tensor":
        if scale is None:
            scale = _scale_from_amax(jnp.max(jnp.abs(x)), dtype)
        return _cast(x, _inverse(scale), dtype), scale
    if scale is not None:
        raise ValueError("only tensor scaling takes a given scale")
    if granularity == "row":
        scale = _scale_from_amax(jnp.max(jnp.abs(x), axis=1), dtype)
        return _cast(x, _inverse(scale)[:, None], dtype), scale
    block_rows = 128 if granularity == "128x128" else 1
    # Partial last blocks: zeros added to fill them change no amax and are cut off again.
    padded_rows, padded_columns = -(-rows // block_rows) * block_rows, -(-columns // 128) * 128
    x = jnp.pad(x, ((0, padded_rows - rows), (0, padded_columns - columns)))
    blocks = x.reshape(padded_rows // block_rows, block_rows, padded_columns // 128, 128)
    scale = _scale_from_amax(jnp.max(jnp.abs(blocks), axis=(1, 3)), dtype)
    x_q = _cast(blocks, _inverse(scale)[:, None, :, None], dtype)
    x_q = x_q.reshape(padded_rows, padded_columns)
    return x_q[:rows, :columns], scale


def delayed_scale_update(x, dtype, scale, amax_history, amax_compute: str = "max",
                         margin: int = 0, axes: tuple = ()):
    """Flax fp8_ops' delayed scaling (the same state, updated the same way): the scale for this
    step comes from the history before it ("max" over it, or the most recent entry), then x's
    amax (over the mesh axes `axes` inside shard_map) enters the history at index 0 (the rest
    rolls by one). Returns (scale, history)."""
    previous = jnp.max(amax_history, axis=0) if amax_compute == "max" else amax_history[0]
    # Flax's arithmetic (1 / ((max / amax) / 2^margin)), kept so that the states evolve alike.
    factor = (fp8_max(dtype) / previous) / (2.0**margin)
    factor = jnp.where((previous > 0.0) & jnp.isfinite(previous), factor, 1.0 / scale)
    new_scale = (1.0 / factor).astype(scale.dtype)
    amax = global_amax(x, axes).astype(amax_history.dtype)
    new_history = jnp.roll(amax_history, shift=-1, axis=0).at[0].set(amax)
    return new_scale, new_history


def fused_quantize(x, dtype, granularity: str = "tensor", *, row_major: bool = True,
                   transposed: bool = False, scale=None, margin: int = 0, amax: bool = False,
                   scale_layout: str = "row-major", up=None, activation=None):
    """fp8dot.quantize inside jax.jit: one XLA custom call (fp8dot_quantize) to fp8dot's fused
    kernel, which writes q and, from the same read, q_t (the quantised transpose, with the scales
    of its own contracting dim) — a pass XLA would otherwise make separately. Returns
    fp8dot.Quantized (q, scale, q_t, scale_t, amax; None where not asked for). The rule is the
    same as quantize()'s; the C++ library checks the call while tracing.

    scale_layout="column-major" (1x128): the scales are the same arrays, laid out by XLA with a
    K-block's rows side by side (the call declares that layout for them), which fp8dot's dots
    ask XLA for: they then reach the GEMM with no copy or reordering in between.

    activation="gelu" quantises GELU(x) (tanh form), up= (an array like x) SiLU(x) · up, instead
    of x: computed inside the kernel and never written (fp8dot.quantize)."""
    _ffi.register()
    if x.ndim != 2:
        raise ValueError(f"fused_quantize takes a matrix [rows, contracting], got shape {x.shape}")
    quantizer = make_quantizer(_description(x, "x"), jnp.dtype(dtype).name, granularity,
                               bool(row_major), bool(transposed), scale is not None, int(margin),
                               bool(amax), scale_layout,
                               None if up is None else _description(up, "up"), activation)
    activation = "swiglu" if up is not None and activation is None else activation or "none"
    q_shape, scale_shape, q_t_shape, scale_t_shape = quantizer.shapes
    shapes = [(q_shape, dtype), (scale_shape, jnp.float32), (q_t_shape, dtype),
              (scale_t_shape, jnp.float32), (() if amax else None, jnp.float32)]
    results = [jax.ShapeDtypeStruct(tuple(shape), element) for shape, element in shapes
               if shape is not None]
    # The 1x128 scales (results 1 and 3) column-major where asked: (1, 0) major-to-minor, as
    # ffi_call takes layouts.
    column_major = quantizer.column_major_scales
    output_layouts = [(1, 0) if column_major and index in (1, 3) else None
                      for index, (shape, _) in enumerate(shapes) if shape is not None]
    operands = [x] if up is None else [x, up]
    if scale is not None:
        operands.append(jnp.asarray(scale, jnp.float32).reshape(()))
    outputs = iter(jax.ffi.ffi_call(_ffi.QUANTIZE_TARGET, results, vmap_method="sequential",
                                    output_layouts=output_layouts)(
        *operands, granularity=granularity, scale_layout=scale_layout, activation=activation,
        row_major=np.bool_(row_major),
        transposed=np.bool_(transposed), given_scale=np.bool_(scale is not None),
        compute_amax=np.bool_(amax), margin=np.int64(margin)))
    # Typed as varying over the operands' mesh axes under shard_map (_mesh_typing).
    quantized = Quantized(*[None if shape is None else vary_like(next(outputs), *operands)
                            for shape, _ in shapes])
    return shared_transposed_scale(quantized, granularity)
