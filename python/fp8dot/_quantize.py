"""fp8dot.quantize: a matrix to FP8 (and its transpose, in the same pass) with the scales
fp8dot's scaled dots take, on numpy arrays or torch tensors, host or GPU.

The rule and every check are the C++ library's (include/fp8dot/quantize.h, _core.Quantizer);
this module allocates the outputs in the caller's framework and passes pointers.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, NamedTuple, Optional

from . import _core
from ._arrays import describe
from ._dot import _numpy_empty, check_current_device, dtype_name

GRANULARITIES = ("tensor", "row", "1x128", "128x128")


class Quantized(NamedTuple):
    """What fp8dot.quantize returns; fields that were not asked for are None.

    q [rows, cols] and its scale (x ≈ q · scale); q_t [cols, rows] and scale_t (xᵀ ≈ q_t ·
    scale_t): scale_t is q's own scale for tensor scales, the transpose (a view) of it for
    128×128 blocks, and scales of its own for row and 1×128 scales. amax is max |x|.
    """
    q: Any
    scale: Any
    q_t: Any
    scale_t: Any
    amax: Any


@functools.lru_cache(maxsize=4096)
def make_quantizer(description, out_dtype: str, granularity: str, row_major: bool,
                   transposed: bool, given_scale: bool, margin: int, amax: bool,
                   scale_layout: str = "row-major", up_description=None,
                   activation: Optional[str] = None) -> "_core.Quantizer":
    """The validated C++ Quantizer for an input description and options, made once
    (up_description: the swiglu activation's second input; activation None: "swiglu" with it,
    else "none")."""
    return _core.Quantizer(description, out_dtype, granularity, row_major, transposed,
                           given_scale, margin, amax, scale_layout, up_description,
                           activation or "")


def check_given_scale(scale, device: str):
    """The given scale's ArrayInfo, after checking it is one float32 on x's device."""
    info = describe(scale, "scale")
    dtype, shape, _ = info.description
    if dtype.removeprefix("torch.") != "float32" or any(d != 1 for d in shape):
        raise ValueError(f"scale must be one float32 (a delayed-scaling scale), got {dtype} of "
                         f"shape {tuple(shape)}")
    if info.device != device:
        raise ValueError(f"scale is on {info.device} but x is on {device}")
    return info


def quantize(x, dtype, granularity: str = "tensor", *, row_major: bool = True,
             transposed: bool = False, scale=None, margin: int = 0, amax: bool = False,
             scale_layout: str = "row-major", backend: str = "auto",
             share_scales: bool = True, up=None, activation: Optional[str] = None) -> Quantized:
    """Quantises the row-major matrix x [rows, cols] (f32, bf16 or f16) to `dtype`
    (float8_e4m3fn or float8_e5m2) with one scale per `granularity` group of its rows (cols is
    the contracting dim of the GEMM it feeds): "tensor", "row", "1x128" or "128x128".

        scale = amax(group) · 2^margin / max(dtype)   (1 where amax is 0 or NaN)
        q     = x · (1 / scale) in float32 (reciprocal correctly rounded), rounded to nearest
                even and saturated

    transposed=True also writes q_t = the quantised xᵀ in the same pass (row_major=False skips
    q). scale= casts with that one float32 scale instead (delayed scaling; tensor granularity)
    and returns it as `scale`; a given scale that is not a positive finite number (a delayed
    history with no amax yet) is replaced by x's own, as without scale=. amax=True also returns
    max |x|. On the GPU one kernel reads x once, except where the scales depend on whole
    tensors or rows of this x (tensor and row scales without a usable scale=): those read it
    twice, an amax pass first. The CPU backend gives the same bytes.

    scale_layout="column-major" (1x128 only) writes the 1×128 scales with a K-block's rows side
    by side: same shapes and values, returned as column-major views (strides (1, rows)), the
    layout both GPU GEMM engines read in place, so a scaled dot taking them reorders nothing.

    share_scales=False leaves scale_t None where it is q's (for the torch op, whose outputs
    cannot alias).

    activation= quantises an activation of x instead of x, computed on the way in (never
    written) in float32 and rounded to x's dtype, as the framework's elementwise kernel would
    store it (include/fp8dot/quantize.h): "gelu" GELU(x) in its tanh form (jax.nn.gelu's
    default, torch's approximate="tanh"); "swiglu" SiLU(x) · up with up= (an array like x), the
    product a gated MLP hands its down projection (up= alone implies it).
    """
    info = describe(x, "x")
    up_info = None if up is None else describe(up, "up")
    if up_info is not None and up_info.device != info.device:
        raise ValueError(f"up is on {up_info.device} but x is on {info.device}")
    if backend not in ("auto", "cpu", "cuda"):
        raise ValueError(f"backend must be 'auto', 'cpu' or 'cuda', got {backend!r}")
    on_gpu = info.device != "cpu"
    if on_gpu and backend == "cpu" or not on_gpu and backend == "cuda":
        raise ValueError(f"backend {backend!r} cannot run on data on {info.device}")
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(scale, numpy.generic):
        scale = numpy.asarray(scale)  # a numpy scalar as a 0-d array, alive for the call
    given = 0 if scale is None else check_given_scale(scale, info.device).pointer
    quantizer = make_quantizer(info.description, dtype_name(dtype), granularity, bool(row_major),
                               bool(transposed), scale is not None, int(margin), bool(amax),
                               scale_layout, None if up_info is None else up_info.description,
                               activation)
    up_pointer = 0 if up_info is None else up_info.pointer
    is_torch = not hasattr(x, "__array_interface__")
    outputs = allocate_outputs(quantizer, dtype, is_torch, x.device if is_torch else None, amax)
    pointers = [0 if a is None else (a.data_ptr() if is_torch else a.ctypes.data)
                for a in (outputs.q, outputs.scale, outputs.q_t, outputs.scale_t, outputs.amax)]
    if on_gpu:
        import torch

        check_current_device(x.device)
        quantizer.run_cuda(info.pointer, given, *pointers, up_pointer,
                           torch.cuda.current_stream(x.device).cuda_stream)
    else:
        quantizer.run_host(info.pointer, given, *pointers, up_pointer)
    return shared_transposed_scale(outputs, granularity) if share_scales else outputs


def allocate_outputs(quantizer, dtype, is_torch: bool, device, amax: bool) -> Quantized:
    """Empty outputs of the quantizer's shapes (None for what it does not produce), the 2-D
    scales column-major where the quantizer writes them so."""
    q_shape, scale_shape, q_t_shape, scale_t_shape = quantizer.shapes
    name = dtype_name(dtype).removeprefix("torch.")
    if is_torch:
        import torch

        def empty(shape, element):
            return None if shape is None else torch.empty(shape, dtype=element, device=device)
        fp8, f32 = getattr(torch, name), torch.float32
    else:
        def empty(shape, element):
            return None if shape is None else _numpy_empty(shape, element)
        fp8, f32 = name, "float32"

    def empty_scale(shape):
        if shape is None or not quantizer.column_major_scales:
            return empty(shape, f32)
        return empty(tuple(reversed(shape)), f32).T  # a transposed view: (1, rows) strides
    return Quantized(empty(q_shape, fp8), empty_scale(scale_shape), empty(q_t_shape, fp8),
                     empty_scale(scale_t_shape), empty(() if amax else None, f32))


def shared_transposed_scale(outputs: Quantized, granularity: str) -> Quantized:
    """Fills scale_t where q_t shares q's scales: the same tensor scale, or the 128×128 blocks'
    transpose (a view)."""
    if outputs.q_t is None:
        return outputs
    if granularity == "tensor":
        return outputs._replace(scale_t=outputs.scale)
    if granularity == "128x128":
        return outputs._replace(scale_t=outputs.scale.T)
    return outputs


def gemm_scale_layout(granularity: str) -> str:
    """The scale layout the frameworks' layers have quantize write: the one both GPU engines read
    in place in either role of the operand (dot_spec.h's InPlaceScaleLayout): 1×128 scales
    column-major, as a lhs [M, K/128] and, viewed transposed, as a rhs [K/128, N]; the other
    granularities have one layout."""
    return "column-major" if granularity == "1x128" else "row-major"


def transposed_only(quantize_fn, matrix, granularity: str, dtype, **options):
    """matrixᵀ alone quantised in `dtype` for the GEMM that contracts matrix's rows: a Quantized
    whose q_t and scale_t (in gemm_scale_layout's layout) are that operand, no q written.
    `options`: quantize_fn's scale and amax."""
    return quantize_fn(matrix, dtype, granularity, row_major=False, transposed=True,
                       scale_layout=gemm_scale_layout(granularity), **options)


def both_orientations(quantize_fn, matrix, granularity: str, dtype, transposed_dtype,
                      scale=None, amax: bool = False, transposed_scale=None):
    """(q, scale) of matrix [R, C] for the GEMM that contracts C (in `dtype`, with the given
    delayed-scaling scale if any) and, unless transposed_dtype is None, (q_t, scale_t) of matrixᵀ
    for the GEMM that contracts R, each scale in its own operand's terms. `quantize_fn` is a
    framework's fused quantisation (fp8dot.torch.quantize, fp8dot.jax.fused_quantize): one pass
    when both share a dtype; a transpose in another dtype is quantised on its own (current
    scaling, or with `transposed_scale`). Returns (operand, transposed operand or None, max
    |matrix| when `amax`, else None), the amax from the same pass (for a delayed-scaling
    history). The scales are in gemm_scale_layout's layout."""
    scale_layout = gemm_scale_layout(granularity)
    same_dtype = transposed_dtype == dtype
    result = quantize_fn(matrix, dtype, granularity, transposed=same_dtype, scale=scale,
                         amax=amax, scale_layout=scale_layout)
    operand = (result.q, result.scale)
    if transposed_dtype is None:
        return operand, None, result.amax
    if same_dtype:
        return operand, (result.q_t, result.scale_t), result.amax
    other = transposed_only(quantize_fn, matrix, granularity, transposed_dtype,
                            scale=transposed_scale)
    return operand, (other.q_t, other.scale_t), result.amax
