"""fp8dot's torch operators, registered with torch.library.

`torch.ops.fp8dot.scaled_mm` is one scaled FP8 matrix product (tensor, row, 1×128 and 128×128
scales; bf16/f16/f32/FP8 outputs; bias; amax). It has a fake (meta) kernel, so torch.compile traces
it without a graph break, and on CUDA it enqueues a cached plan on the current stream without
allocating beyond its outputs, so a compiled step can be captured in a CUDA graph. The precision
pair is an argument: which accumulation it means is decided in C++ (ResolveAccumulation), nowhere
here. Its kernel is C++ (fp8dot/_torch_ops.so, src/torch) where the package was built with torch
present (NATIVE is True), so a call costs no Python; otherwise the same op is defined below in
Python, with the same schema, fake kernel and results. The same holds for
`torch.ops.fp8dot.quantize`. Errors carry the library's message either way: a RuntimeError from
the C++ kernels (as torch's own operators raise), a ValueError from the Python definitions.

`torch.ops.fp8dot.quantize` is fp8dot.quantize as an op: a matrix to FP8 with its scales (every
granularity), optionally its transpose in the same pass, and its amax; one fused CUDA kernel on
the GPU (include/fp8dot/quantize.h), the same bytes on the CPU.
"""

from __future__ import annotations

import ctypes
import warnings
from pathlib import Path
from typing import Optional

import torch

from .. import _core
from .._dot import PreparedCall, check_current_device, scaled_dot
from .._arrays import check_storage_holds_elements, describe
from .._quantize import allocate_outputs, check_given_scale, make_quantizer
from .._quantize import quantize as _quantize_any


NATIVE_LIBRARY = Path(__file__).resolve().parent.parent / "_torch_ops.so"


def _load_native_ops() -> bool:
    """Loads fp8dot/_torch_ops.so (the C++ operators) when the build made it; it needs torch 2.10
    or newer (PyTorch's stable ABI)."""
    if not NATIVE_LIBRARY.exists():
        return False
    try:
        torch.ops.load_library(str(NATIVE_LIBRARY))
    except (OSError, RuntimeError) as error:  # not loadable, or its registrations refused
        warnings.warn(f"fp8dot: the C++ torch ops ({NATIVE_LIBRARY}) do not load into torch "
                      f"{torch.__version__} ({error}); using the Python definitions")
        return False
    return True


NATIVE = _load_native_ops()


def _native_setting_functions():
    """The C++ ops' library's functions for its own copy of the autotuning setting (it links
    fp8dot apart from fp8dot._core): (set(candidates, cache_path) -> 0, get() -> candidates)."""
    library = ctypes.CDLL(str(NATIVE_LIBRARY))  # the handle torch.ops.load_library opened
    set_autotune = library.fp8dot_torch_set_autotune
    set_autotune.argtypes, set_autotune.restype = [ctypes.c_int, ctypes.c_char_p], ctypes.c_int
    candidates = library.fp8dot_torch_autotune_candidates
    candidates.argtypes, candidates.restype = [], ctypes.c_int
    return set_autotune, candidates


_native_set_autotune, native_autotune_candidates = (_native_setting_functions() if NATIVE
                                                    else (None, None))


def _set_native_autotune(candidates: int, cache_path: str) -> None:
    """Gives the C++ ops' library the package's autotuning setting: at import, and on every
    fp8dot.set_autotune once fp8dot.torch is imported."""
    if not NATIVE:
        return  # the Python ops make their plans through fp8dot._core, which has the setting
    code = _native_set_autotune(candidates, cache_path.encode())
    if code != 0:
        raise (ValueError if code == -1 else RuntimeError)(
            f"fp8dot: the C++ torch ops refused the autotuning setting ({candidates}, "
            f"{cache_path!r}): " + ("candidates must be >= 0" if code == -1 else "internal error"))


try:
    _set_native_autotune(*_core.autotune_setting())
except ValueError:
    pass  # a malformed FP8DOT_AUTOTUNE: the C++ ops read it too, and their first GPU plan says so

# CUDA calls by their tensors' metadata -> the validated C++ Dot: a repeated call (every training
# step) costs one dict lookup before the GEMM is enqueued. The first call of a signature goes
# through fp8dot's full argument checks.
_cuda_dots: dict = {}


def _metadata(tensor: Optional[torch.Tensor]):
    return None if tensor is None else (tensor.dtype, tensor.shape, tensor.stride(), tensor.device)


def _check_every_call(device: torch.device, **tensors: Optional[torch.Tensor]) -> None:
    """What a cached call's metadata cannot vouch for, checked on every call: the current CUDA
    device, and that each tensor's storage still holds its elements."""
    check_current_device(device)
    for name, tensor in tensors.items():
        if tensor is not None:
            check_storage_holds_elements(tensor, name)


def _enqueue_on_gpu(lhs, rhs, lhs_scale, rhs_scale, bias, out_scale, out_dtype, lhs_precision,
                    rhs_precision, compute_amax):
    key = (_metadata(lhs), _metadata(rhs), _metadata(lhs_scale), _metadata(rhs_scale),
           _metadata(bias), _metadata(out_scale), out_dtype, lhs_precision, rhs_precision,
           compute_amax)
    _check_every_call(lhs.device, lhs=lhs, rhs=rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale,
                      bias=bias, out_scale=out_scale)
    dot = _cuda_dots.get(key)
    if dot is None:
        dot = PreparedCall(lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale, out_dtype=out_dtype,
                        precision=(lhs_precision, rhs_precision), bias=bias, out_scale=out_scale,
                        amax=compute_amax).dot
        _cuda_dots[key] = dot
    device = lhs.device
    output = torch.empty(dot.output_shape, dtype=out_dtype, device=device)
    amax = torch.empty(() if compute_amax else (0,), dtype=torch.float32, device=device)
    pointer = lambda t: 0 if t is None else t.data_ptr()
    dot.run_cuda(lhs.data_ptr(), rhs.data_ptr(), pointer(lhs_scale), pointer(rhs_scale),
                 pointer(bias), 0, pointer(out_scale), output.data_ptr(),
                 amax.data_ptr() if compute_amax else 0,
                 torch.cuda.current_stream(device).cuda_stream)
    return output, amax


def _scaled_mm_in_python(lhs: torch.Tensor, rhs: torch.Tensor,
                         lhs_scale: Optional[torch.Tensor], rhs_scale: Optional[torch.Tensor],
                         bias: Optional[torch.Tensor], out_scale: Optional[torch.Tensor],
                         out_dtype: torch.dtype, lhs_precision: str, rhs_precision: str,
                         compute_amax: bool, backend: str) -> tuple[torch.Tensor, torch.Tensor]:
    """D[M,N] = lhs_scale · rhs_scale · (lhs[M,K] · rhs[K,N]) + bias, and max |D| (a 0-d float32
    tensor, empty when compute_amax is False). rhs is typically a weight's transpose view (a
    column-major [K,N]); any dense layout is accepted."""
    if lhs.is_cuda:
        if backend not in ("auto", "cuda"):
            raise ValueError(f"backend {backend!r} runs host data; the tensors are on {lhs.device}")
        return _enqueue_on_gpu(lhs, rhs, lhs_scale, rhs_scale, bias, out_scale, out_dtype,
                               lhs_precision, rhs_precision, compute_amax)
    result = scaled_dot(lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale, out_dtype=out_dtype,
                        precision=(lhs_precision, rhs_precision), bias=bias, out_scale=out_scale,
                        amax=compute_amax, backend=backend)
    if not compute_amax:
        return result, lhs.new_empty((0,), dtype=torch.float32)
    output, amax = result
    if not isinstance(amax, torch.Tensor):
        amax = torch.tensor(amax, dtype=torch.float32)
    return output, amax


def _scaled_mm_fake(lhs, rhs, lhs_scale, rhs_scale, bias, out_scale, out_dtype, lhs_precision,
                    rhs_precision, compute_amax, backend):
    torch._check(lhs.dim() == 2 and rhs.dim() == 2, lambda: "scaled_mm takes matrices")
    torch._check(lhs.shape[1] == rhs.shape[0],
                 lambda: f"lhs [M,K] {tuple(lhs.shape)} and rhs [K,N] {tuple(rhs.shape)} differ in K")
    output = lhs.new_empty((lhs.shape[0], rhs.shape[1]), dtype=out_dtype)
    amax = lhs.new_empty(() if compute_amax else (0,), dtype=torch.float32)
    return output, amax


# CUDA quantisations by the input's metadata and the options -> the validated C++ Quantizer.
_cuda_quantizers: dict = {}


def _empty_if_none(tensor: Optional[torch.Tensor], like: torch.Tensor,
                   dtype: torch.dtype) -> torch.Tensor:
    return like.new_empty((0,), dtype=dtype) if tensor is None else tensor


def _quantize_in_python(x: torch.Tensor, out_dtype: torch.dtype, granularity: str,
                        row_major: bool, transposed: bool, scale: Optional[torch.Tensor],
                        margin: int, compute_amax: bool, scale_layout: str = "row-major",
                        up: Optional[torch.Tensor] = None, activation: str = ""
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                                   torch.Tensor]:
    """(q, scale, q_t, scale_t, amax) of fp8dot.quantize; what was not asked for, and scales
    that are shared with q's, come back as empty tensors (fp8dot.torch.quantize fills them in)."""
    if x.is_cuda:
        key = (_metadata(x), out_dtype, granularity, row_major, transposed, _metadata(scale),
               margin, compute_amax, scale_layout, _metadata(up), activation)
        _check_every_call(x.device, input=x, scale=scale, up=up)
        quantizer = _cuda_quantizers.get(key)
        if quantizer is None:  # the first call of a signature: every check
            if scale is not None:
                check_given_scale(scale, f"cuda:{x.device.index}")
            if up is not None and up.device != x.device:
                raise ValueError(f"up is on {up.device} but x is on {x.device}")
            quantizer = make_quantizer(describe(x, "x").description, str(out_dtype), granularity,
                                       row_major, transposed, scale is not None, margin,
                                       compute_amax, scale_layout,
                                       None if up is None else describe(up, "up").description,
                                       activation)
            _cuda_quantizers[key] = quantizer
        outputs = allocate_outputs(quantizer, out_dtype, True, x.device, compute_amax)
        pointers = [0 if t is None else t.data_ptr() for t in outputs]
        quantizer.run_cuda(x.data_ptr(), 0 if scale is None else scale.data_ptr(), *pointers,
                           0 if up is None else up.data_ptr(),
                           torch.cuda.current_stream(x.device).cuda_stream)
    else:
        outputs = _quantize_any(x, out_dtype, granularity, row_major=row_major,
                                transposed=transposed, scale=scale, margin=margin,
                                amax=compute_amax, scale_layout=scale_layout,
                                share_scales=False, up=up, activation=activation or None)
    dtypes = (out_dtype, torch.float32, out_dtype, torch.float32, torch.float32)
    return tuple(_empty_if_none(t, x, dtype) for t, dtype in zip(outputs, dtypes))


def _block_count(extent: int) -> int:
    """Scale blocks of 128 along an extent (a partial last block counts)."""
    return (extent + 127) // 128


def scale_shape(granularity: str, rows: int, contracting: int) -> tuple[int, ...]:
    """The shape of the scale quantize gives a matrix [rows, contracting] at a granularity."""
    shapes = {"tensor": (), "row": (rows,), "1x128": (rows, _block_count(contracting)),
              "128x128": (_block_count(rows), _block_count(contracting))}
    if granularity not in shapes:
        raise ValueError(f"unknown scale granularity {granularity!r} (tensor, row, 1x128 or "
                         "128x128)")
    return shapes[granularity]


def _quantize_fake(x, out_dtype, granularity, row_major, transposed, scale, margin, compute_amax,
                   scale_layout="row-major", up=None, activation=""):
    torch._check(x.dim() == 2, lambda: f"quantize takes a matrix, got shape {tuple(x.shape)}")
    torch._check(up is None or (up.shape == x.shape and up.dtype == x.dtype),
                 lambda: f"quantize up: {tuple(up.shape)} {up.dtype} does not match the input "
                         f"(gate) {tuple(x.shape)} {x.dtype}")
    rows, cols = x.shape
    # Row and 1x128 scales of q_t are its own; tensor and 128x128 ones are q's (not returned).
    own_transposed_scale = transposed and granularity in ("row", "1x128")
    absent = (0,)

    def scale_of(shape):  # column-major 1x128 scales: strides (1, rows), as the kernels write
        if scale_layout == "column-major" and granularity == "1x128":
            return x.new_empty_strided(shape, (1, shape[0]), dtype=torch.float32)
        return x.new_empty(shape, dtype=torch.float32)
    return (x.new_empty((rows, cols) if row_major else absent, dtype=out_dtype),
            scale_of(scale_shape(granularity, rows, cols)),
            x.new_empty((cols, rows) if transposed else absent, dtype=out_dtype),
            scale_of(scale_shape(granularity, cols, rows)) if own_transposed_scale
            else x.new_empty(absent, dtype=torch.float32),
            x.new_empty(() if compute_amax else absent, dtype=torch.float32))


if NATIVE:  # the C++ kernels are registered; their fake kernels are these
    scaled_mm = torch.ops.fp8dot.scaled_mm
    quantize = torch.ops.fp8dot.quantize
    torch.library.register_fake("fp8dot::scaled_mm")(_scaled_mm_fake)
    torch.library.register_fake("fp8dot::quantize")(_quantize_fake)
else:
    scaled_mm = torch.library.custom_op("fp8dot::scaled_mm", _scaled_mm_in_python,
                                        mutates_args=())
    scaled_mm.register_fake(_scaled_mm_fake)
    quantize = torch.library.custom_op("fp8dot::quantize", _quantize_in_python, mutates_args=())
    quantize.register_fake(_quantize_fake)
