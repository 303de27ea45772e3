"""fp8dot.jax.scaled_dot_general: one scaled FP8 dot_general as an XLA custom call.

The dot is checked while tracing by the C++ library (fp8dot._core.Dot: shapes, types, scale
modes, and the accumulation ResolveAccumulation gives the precision), and runs inside the
compiled program as the FFI target fp8dot_scaled_dot: the CPU emulation on the CPU, the cached
cuBLASLt plan on XLA's stream on the GPU. Nothing is copied around the call.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .. import _core
from .._arrays import layout_strides
from .._dot import check_output_scale, make_dot, precision_pair
from . import _ffi
from ._mesh_typing import vary_like

DimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


def _precision_names(precision) -> tuple[str, str]:
    """A name, a jax.lax.Precision, or a pair of either, as two names."""
    if precision is None:
        return ("DEFAULT", "DEFAULT")
    if isinstance(precision, (str, jax.lax.Precision)):
        precision = (precision, precision)
    names = tuple(p.name if isinstance(p, jax.lax.Precision) else str(p)
                  for p in precision_pair(precision))
    return names  # type: ignore[return-value]


def _description(x, what: str, layout: tuple[int, ...] = ()):
    """(dtype name, shape, strides): an abstract array as XLA lays it out for the custom call
    (row-major, or the minor-to-major layout the call declares for it)."""
    shape = tuple(int(d) for d in np.shape(x))
    try:
        name = jnp.dtype(x.dtype).name
    except AttributeError:
        raise TypeError(f"{what} must be a JAX array, got {type(x).__name__}") from None
    return (name, shape, layout_strides(shape, layout))


def _normalised_dimension_numbers(dimension_numbers, lhs_rank: int, rhs_rank: int):
    if dimension_numbers is None:
        if lhs_rank == 2 and rhs_rank == 2:
            return (((1,), (0,)), ((), ()))
        if lhs_rank == 3 and rhs_rank == 3:
            return (((2,), (1,)), ((0,), (0,)))
        raise ValueError(f"lhs has rank {lhs_rank} and rhs rank {rhs_rank}: without "
                         "dimension_numbers both must be matrices or batches of matrices")
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return tuple(tuple(tuple(int(d) for d in dims) for dims in pair)
                     for pair in ((lc, rc), (lb, rb)))
    except (TypeError, ValueError):
        raise ValueError("dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                         f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None


def trace_dot(lhs, rhs, dimension_numbers, *, lhs_scale=None, rhs_scale=None,
              lhs_scale_mode=None, rhs_scale_mode=None, precision=None, algorithm=None,
              preferred_element_type=jnp.float32, bias=None, c=None, epilogue=None, alpha=1.0,
              beta=0.0, output_scale=None, compute_amax=False,
              scale_layouts=((), ())) -> "_core.Dot":
    """The validated C++ Dot of a call (cached per signature), from the arguments' shapes and
    dtypes and the layouts the call declares for its scales; raises ValueError naming what is
    wrong."""
    (lc, rc), (lb, rb) = dimension_numbers
    described = {name: None if array is None else _description(array, name, layout)
                 for name, array, layout in (("lhs_scale", lhs_scale, scale_layouts[0]),
                                             ("rhs_scale", rhs_scale, scale_layouts[1]),
                                             ("bias", bias, ()), ("c", c, ()))}
    return make_dot(_description(lhs, "lhs"), _description(rhs, "rhs"), (lc, rc, lb, rb),
                    _precision_names(precision), algorithm,
                    jnp.dtype(preferred_element_type).name, described["lhs_scale"],
                    described["rhs_scale"], lhs_scale_mode, rhs_scale_mode, described["bias"],
                    described["c"], epilogue, float(alpha), float(beta), output_scale is not None,
                    bool(compute_amax))


def scaled_dot_general(lhs, rhs, dimension_numbers: Optional[DimensionNumbers] = None, *,
                       lhs_scale=None, rhs_scale=None, precision=None,
                       preferred_element_type: Any = jnp.float32, algorithm: Optional[str] = None,
                       lhs_scale_mode: Optional[str] = None,
                       rhs_scale_mode: Optional[str] = None, bias=None, c=None,
                       epilogue: Optional[str] = None, alpha: float = 1.0, beta: float = 0.0,
                       output_scale=None, compute_amax: bool = False):
    """D = epilogue(alpha · lhs_scale · rhs_scale · dot_general(lhs, rhs) + beta · c + bias),
    as jax.lax.dot_general's dimension numbers read it, usable under jax.jit and jax.vmap.

    precision (a name, jax.lax.Precision, or an (lhs, rhs) pair) decides the accumulation as
    XLA's PrecisionConfig does: DEFAULT on FP8 operands is the tensor cores' fast accumulation,
    HIGHEST is promoted to FP32. Scales are float32 dequantisation factors; their shapes name
    the mode ([] tensor, [M]/[N] rows/columns, [M, K/128]/[K/128, N] 1×128 blocks,
    [M/128, K/128]/[K/128, N/128] 128×128 blocks, in the canonical GEMM's terms), or pass
    lhs_scale_mode/rhs_scale_mode. output_scale (FP8 outputs) multiplies D before the cast;
    compute_amax=True returns (D, amax) with amax the max |D| before it.

    Under jax.vmap, a mapped lhs against an unmapped rhs (a shared weight) folds into the lhs's
    rows: one call, the rhs read once. Otherwise a mapped lhs or rhs becomes one more batch
    dimension of the dot (an unmapped operand is broadcast to it; unmapped scales are shared by
    the batch); mapped scales, bias, c or output_scale run the dot once per element.
    """
    named = dict(lhs=lhs, rhs=rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale, bias=bias, c=c,
                 output_scale=output_scale)
    for what, array in named.items():
        if array is not None and not (hasattr(array, "shape") and hasattr(array, "dtype")):
            raise TypeError(f"{what} must be a JAX or numpy array, got {type(array).__name__}")
    dimension_numbers = _normalised_dimension_numbers(dimension_numbers, np.ndim(lhs),
                                                      np.ndim(rhs))
    options = dict(lhs_scale_mode=lhs_scale_mode, rhs_scale_mode=rhs_scale_mode,
                   precision=_precision_names(precision), algorithm=algorithm,
                   preferred_element_type=jnp.dtype(preferred_element_type), epilogue=epilogue,
                   alpha=float(alpha), beta=float(beta), compute_amax=bool(compute_amax))
    arrays = (lhs, rhs, lhs_scale, rhs_scale, bias, c, output_scale)
    return _not_differentiable(dimension_numbers, tuple(sorted(options.items())), *arrays)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def _not_differentiable(dimension_numbers, options, *arrays):
    return _batched_call(dimension_numbers, options, *arrays)


@_not_differentiable.defjvp
def _not_differentiable_jvp(dimension_numbers, options, primals, tangents):
    raise ValueError(
        "fp8dot.jax.scaled_dot_general is one GEMM and has no gradient of its own: differentiate "
        "fp8dot.jax.fp8_dot_general (or fp8dot.flax.DotGeneral), whose custom VJP runs the "
        "recipe's dgrad and wgrad GEMMs")


def _declared_scale_layouts(dot: "_core.Dot", lhs_scale, rhs_scale):
    """The layouts the call asks XLA to hand the scales over in: the ones the CUDA engines read
    in place (so XLA, not a reordering launch, makes them: for free where the scale's producer
    writes them so, as fp8dot's column-major 1×128 quantisation and a transpose of a row-major
    scale do). Row-major, as XLA's default, for a scale with a dim of 1, whose bytes are the same
    in every layout."""
    def declared(scale, layout):
        layout = tuple(layout)
        return layout if scale is not None and np.ndim(scale) == 2 and \
            min(np.shape(scale)) > 1 else ()
    in_place = dot.in_place_scale_layouts
    return declared(lhs_scale, in_place[0]), declared(rhs_scale, in_place[1])


def _call(dimension_numbers, options, lhs, rhs, lhs_scale, rhs_scale, bias, c, output_scale):
    options = dict(options)
    if output_scale is not None:
        check_output_scale(_description(output_scale, "output_scale"))
    arrays = dict(lhs_scale=lhs_scale, rhs_scale=rhs_scale, bias=bias, c=c,
                  output_scale=output_scale)
    dot = trace_dot(lhs, rhs, dimension_numbers, **arrays, **options)
    scale_layouts = _declared_scale_layouts(dot, lhs_scale, rhs_scale)
    if scale_layouts != ((), ()):  # the Dot that runs: its scales in those layouts
        dot = trace_dot(lhs, rhs, dimension_numbers, **arrays, **options,
                        scale_layouts=scale_layouts)
    platforms = _ffi.register()
    # The process's autotuning now (fp8dot.set_autotune) goes into the call, so that the handler
    # looks up the plan made here whatever the setting is when the program runs.
    autotune_candidates, autotune_cache = _core.autotune_setting()
    if "CUDA" in platforms and jax.default_backend() == "gpu":
        # A plan is made (and autotuned) here, while tracing: inside an XLA command buffer the
        # handler can only look it up.
        dot.prepare_cuda()
    results = [jax.ShapeDtypeStruct(tuple(dot.output_shape), jnp.dtype(dot.output_dtype))]
    if options["compute_amax"]:
        results.append(jax.ShapeDtypeStruct((), jnp.float32))
    (lc, rc), (lb, rb) = dimension_numbers
    operands, input_layouts = [lhs, rhs], [None, None]
    for array, layout in ((lhs_scale, scale_layouts[0]), (rhs_scale, scale_layouts[1]),
                          (bias, ()), (c, ()), (output_scale, ())):
        if array is not None:
            operands.append(array)
            # ffi_call takes layouts major-to-minor, the reverse of XLA's (and fp8dot's) order.
            input_layouts.append(tuple(reversed(layout)) if layout else None)
    outputs = jax.ffi.ffi_call(_ffi.TARGET, results, input_layouts=input_layouts)(
        *operands,
        lhs_scale_layout=np.array(scale_layouts[0], np.int64),
        rhs_scale_layout=np.array(scale_layouts[1], np.int64),
        lhs_contracting=np.array(lc, np.int64), rhs_contracting=np.array(rc, np.int64),
        lhs_batch=np.array(lb, np.int64), rhs_batch=np.array(rb, np.int64),
        lhs_precision=options["precision"][0], rhs_precision=options["precision"][1],
        algorithm=options["algorithm"] or "",
        lhs_scale_mode=dot.lhs_scale_mode if lhs_scale is not None else "none",
        rhs_scale_mode=dot.rhs_scale_mode if rhs_scale is not None else "none",
        epilogue=options["epilogue"] or "", alpha=np.float64(options["alpha"]),
        beta=np.float64(options["beta"]), has_bias=np.bool_(bias is not None),
        has_c=np.bool_(c is not None), output_scale=np.bool_(output_scale is not None),
        compute_amax=np.bool_(options["compute_amax"]),
        autotune_candidates=np.int64(autotune_candidates), autotune_cache=autotune_cache)
    # Typed as varying over the operands' mesh axes under shard_map (_mesh_typing).
    outputs = [vary_like(output, *operands) for output in outputs]
    return tuple(outputs) if options["compute_amax"] else outputs[0]


def _batched_call(dimension_numbers, options, *arrays):
    """_call with a vmap rule that turns a mapped lhs and rhs into a batch dimension."""

    @jax.custom_batching.custom_vmap
    def call(*arrays):
        return _call(dimension_numbers, options, *arrays)

    @call.def_vmap
    def rule(axis_size, in_batched, *arrays):
        lhs_batched, rhs_batched, *others_batched = in_batched
        others_mapped = any(
            batched for batched, array in zip(others_batched, arrays[2:]) if array is not None)
        # amax is one number per call: per element only when each element is its own call.
        if others_mapped or not (lhs_batched or rhs_batched) or dict(options)["compute_amax"]:
            outputs = jax.lax.map(lambda xs: call(*xs), _arrays_with_axis(arrays, in_batched,
                                                                          axis_size))
            return outputs, _all_batched(outputs)
        lhs, rhs = arrays[0], arrays[1]
        if lhs_batched and not rhs_batched and arrays[5] is None and \
                _lhs_scale_folds_into_m(dimension_numbers, options, lhs, arrays[2]):
            return _folded_into_m(dimension_numbers, options, axis_size, arrays), True
        if not lhs_batched:
            lhs = jnp.broadcast_to(lhs, (axis_size, *lhs.shape))
        if not rhs_batched:
            rhs = jnp.broadcast_to(rhs, (axis_size, *rhs.shape))
        others = list(arrays[2:])
        if others[3] is not None:  # C, shared by the batch: one per element of the output
            others[3] = jnp.broadcast_to(others[3], (axis_size, *np.shape(others[3])))
        (lc, rc), (lb, rb) = dimension_numbers
        shift = lambda dims: tuple(d + 1 for d in dims)
        batched_numbers = ((shift(lc), shift(rc)), ((0, *shift(lb)), (0, *shift(rb))))
        outputs = _batched_call(batched_numbers, options, lhs, rhs, *others)
        return outputs, _all_batched(outputs)

    return call(*arrays)


def _lhs_scale_folds_into_m(dimension_numbers, options, batched_lhs, lhs_scale) -> bool:
    """Whether the elements' lhs scales, stacked along M, are the folded dot's: a tensor scale
    (shared), row and 1x128 scales (one row of scales per row of the lhs); 128x128 ones only
    where each element's M is whole blocks (else an element's last block row would take in the
    next element's first rows)."""
    if lhs_scale is None or np.ndim(lhs_scale) == 0:
        return True
    (lc, _), (lb, _) = dimension_numbers
    shape = np.shape(batched_lhs)[1:]  # one element's
    m = int(np.prod([size for d, size in enumerate(shape) if d not in lc and d not in lb]))
    mode = dict(options)["lhs_scale_mode"]
    if mode == "128x128" or (mode is None and np.ndim(lhs_scale) == 2 and
                             np.shape(lhs_scale)[0] != m):
        return m % 128 == 0 and np.shape(lhs_scale)[0] == m // 128
    return np.shape(lhs_scale)[0] == m


def _folded_into_m(dimension_numbers, options, axis_size, arrays):
    """A mapped lhs against a shared rhs: the mapped axis becomes one more free (M) dim of the
    lhs, so the rhs (a weight, typically) is not copied once per element. Row and block scales
    of the lhs grow with M and are tiled; the mapped axis is moved to the front of the output."""
    lhs, rhs, lhs_scale, rhs_scale, bias, c, output_scale = arrays
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda dims: tuple(d + 1 for d in dims)
    numbers = ((shift(lc), tuple(rc)), (shift(lb), tuple(rb)))
    if lhs_scale is not None and np.ndim(lhs_scale) > 0:  # per row or block row: stacked
        lhs_scale = jnp.tile(lhs_scale, (axis_size,) + (1,) * (np.ndim(lhs_scale) - 1))
    out = _batched_call(numbers, options, lhs, rhs, lhs_scale, rhs_scale, bias, c, output_scale)
    return jnp.moveaxis(out, len(lb), 0)


def _arrays_with_axis(arrays, in_batched, axis_size):
    """Every array with the mapped axis in front (unmapped ones broadcast), for lax.map."""
    return tuple(None if a is None else
                 (a if batched else jnp.broadcast_to(a, (axis_size, *np.shape(a))))
                 for a, batched in zip(arrays, in_batched))


def _all_batched(outputs):
    return (True, True) if isinstance(outputs, tuple) else True
