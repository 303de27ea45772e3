"""fp8dot.scaled_dot: one scaled dot on numpy arrays or torch tensors, host or GPU.

The work is the C++ library's (fp8dot._core.Dot): this module reads the arrays' descriptions,
caches one validated Dot per distinct call signature, allocates the output in the caller's
framework and passes data pointers. Nothing here decides an accumulation, a layout or a shape.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any, Optional, Sequence, Union

from . import _core
from ._arrays import ArrayInfo, describe

Precision = Union[str, Sequence[str]]


def dtype_name(dtype: Any) -> str:
    """The name of a string, numpy/ml_dtypes type or torch.dtype ('torch.bfloat16' stays so: the
    binding reads both spellings)."""
    if isinstance(dtype, str):
        return dtype
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return str(dtype)
    import numpy

    return numpy.dtype(dtype).name


def precision_pair(precision: Precision) -> tuple[str, str]:
    if isinstance(precision, str):
        return (precision, precision)
    pair = tuple(str(p) for p in precision)
    if len(pair) != 2:
        raise ValueError(f"precision must be one name or a (lhs, rhs) pair, got {precision!r}")
    return pair  # type: ignore[return-value]


def _dimension_numbers(dimension_numbers) -> Optional[tuple]:
    """jax.lax.dot_general's ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))."""
    if dimension_numbers is None:
        return None
    try:
        (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
        return tuple(tuple(int(d) for d in dims)
                     for dims in (lhs_contracting, rhs_contracting, lhs_batch, rhs_batch))
    except (TypeError, ValueError):
        raise ValueError("dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                         f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None


@functools.lru_cache(maxsize=4096)
def make_dot(lhs, rhs, dimension_numbers, precision, algorithm, out_dtype, lhs_scale, rhs_scale,
             lhs_scale_mode, rhs_scale_mode, bias, c, epilogue, alpha, beta, output_scale,
             amax, engine="auto") -> "_core.Dot":
    """The validated C++ Dot for array descriptions and options, made once per signature."""
    return _core.Dot(lhs, rhs, dimension_numbers, precision, algorithm, out_dtype, lhs_scale,
                     rhs_scale, lhs_scale_mode, rhs_scale_mode, bias, c, epilogue, alpha, beta,
                     output_scale, amax, engine)


def _optional(array, what) -> Optional[ArrayInfo]:
    return None if array is None else describe(array, what)


def _pointer(info: Optional[ArrayInfo]) -> int:
    return 0 if info is None else info.pointer


def _as_scalar_array(value, like: ArrayInfo, framework_is_torch: bool):
    """A Python number as the f32 scalar array an output scale is passed as."""
    if framework_is_torch:
        import torch

        return torch.tensor(float(value), dtype=torch.float32, device=like.device)
    import numpy

    return numpy.asarray(value, dtype=numpy.float32)


_ARGUMENTS = ("lhs_scale", "rhs_scale", "bias", "c", "out_scale")


def check_output_scale(description) -> None:
    """The output scale is read as one float32: anything else is refused here, where the binding
    only learns that there is one."""
    if description is None:
        return
    dtype, shape, _ = description
    if dtype.removeprefix("torch.") != "float32" or math.prod(shape) != 1:
        raise ValueError(f"out_scale must be one float32, got {dtype} of shape {tuple(shape)}")


class PreparedCall:
    """A call's validated Dot, its arrays' descriptions and their data pointers."""

    def __init__(self, lhs, rhs, *, lhs_scale=None, rhs_scale=None, out_dtype="float32",
                 precision: Precision = ("default", "default"), algorithm=None,
                 dimension_numbers=None, bias=None, epilogue=None, out_scale=None, amax=False,
                 lhs_scale_mode=None, rhs_scale_mode=None, alpha=1.0, c=None, beta=0.0,
                 engine: str = "auto"):
        self.lhs, self.rhs = describe(lhs, "lhs"), describe(rhs, "rhs")
        self.is_torch = not hasattr(lhs, "__array_interface__")
        if hasattr(rhs, "__array_interface__") == self.is_torch:
            raise TypeError("lhs and rhs must both be numpy arrays or both torch tensors")
        if out_scale is not None and not hasattr(out_scale, "shape"):
            out_scale = _as_scalar_array(out_scale, self.lhs, self.is_torch)
        arrays = dict(lhs_scale=lhs_scale, rhs_scale=rhs_scale, bias=bias, c=c, out_scale=out_scale)
        # numpy scalars (np.float32(0.5)) as 0-d arrays; kept alive for the call, as out_scale.
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            arrays = {name: numpy.asarray(a) if isinstance(a, numpy.generic) else a
                      for name, a in arrays.items()}
        self.arrays = arrays
        infos = {name: _optional(arrays[name], name) for name in _ARGUMENTS}
        for what, info in [("rhs", self.rhs), *infos.items()]:
            if info is not None and info.device != self.lhs.device:
                raise ValueError(f"{what} is on {info.device} but lhs is on {self.lhs.device}: "
                                 "every array of one dot must be on the same device")
        description = {name: None if info is None else info.description
                       for name, info in infos.items()}
        check_output_scale(description["out_scale"])
        self.dot = make_dot(self.lhs.description, self.rhs.description,
                            _dimension_numbers(dimension_numbers), precision_pair(precision),
                            algorithm, dtype_name(out_dtype), description["lhs_scale"],
                            description["rhs_scale"], lhs_scale_mode, rhs_scale_mode,
                            description["bias"], description["c"], epilogue, float(alpha),
                            float(beta), out_scale is not None, bool(amax), str(engine))
        self.pointers = [_pointer(infos[name]) for name in _ARGUMENTS]
        self.on_gpu = self.lhs.device != "cpu"

    def backend(self, requested: str) -> str:
        """"auto" runs host data on the CPU emulation and GPU data on the GPU."""
        if requested == "auto":
            return "cuda" if self.on_gpu else "cpu"
        if self.on_gpu and requested != "cuda":
            raise ValueError(f"backend {requested!r} runs host data; the arrays are on "
                             f"{self.lhs.device}")
        return requested


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, out_dtype="float32",
               precision: Precision = ("default", "default"), algorithm: Optional[str] = None,
               dimension_numbers=None, bias=None, epilogue: Optional[str] = None, out_scale=None,
               amax: bool = False, backend: str = "auto", lhs_scale_mode: Optional[str] = None,
               rhs_scale_mode: Optional[str] = None, alpha: float = 1.0, c=None,
               beta: float = 0.0, engine: str = "auto"):
    """D = epilogue(alpha · lhs_scale · rhs_scale · (lhs · rhs) + beta · c + bias).

    lhs and rhs are numpy arrays (ml_dtypes for float8/bfloat16) or torch tensors, on the host or
    (torch) on the GPU; every array argument must live on the same device. The precision pair
    (and algorithm) decides the accumulation exactly as XLA's PrecisionConfig does:
    ("default", "default") on FP8 operands is the tensor cores' fast accumulation, anything higher
    is promoted to FP32 (fp8dot.resolve_accumulation tells which).

    Scales are float32 dequantisation factors whose shape names the mode (or pass
    lhs_scale_mode/rhs_scale_mode): [] or [1] tensor, [M] / [N] per row / column, [M, K/128] /
    [K/128, N] 1×128 blocks, [M/128, K/128] / [K/128, N/128] 128×128 blocks. out_scale (FP8
    outputs) multiplies D before the cast; amax=True also returns max |D| before it.

    Returns the output (row-major, in the inputs' framework and on their device), or
    (output, amax) with amax=True (a float on the host, a 0-d float32 tensor on the GPU). backend
    "auto" runs host data on the CPU emulation of the resolved accumulation and GPU data on the
    CUDA backend (cuBLASLt, or fp8dot's own kernel where the backend's auto engine picks it:
    docs/own-gemm.md); "cpu-blas", "cpu-reference" and "cuda" (which copies host data through
    the GPU) can be asked for. engine ("auto", "cublaslt" or "own") picks the CUDA backend's
    GEMM engine: "own" forces fp8dot's own kernel (block scales, or tensor/row scales with
    promoted accumulation; anything else is refused with the reason), "cublaslt" cuBLASLt.
    """
    call = PreparedCall(lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale, out_dtype=out_dtype,
                     precision=precision, algorithm=algorithm,
                     dimension_numbers=dimension_numbers, bias=bias, epilogue=epilogue,
                     out_scale=out_scale, amax=amax, lhs_scale_mode=lhs_scale_mode,
                     rhs_scale_mode=rhs_scale_mode, alpha=alpha, c=c, beta=beta,
                     engine=engine)
    backend = call.backend(backend)
    if call.on_gpu:
        return _run_cuda(call, lhs.device, amax)
    return _run_host(call, backend, amax)


def _run_host(call: PreparedCall, backend: str, amax: bool):
    dot = call.dot
    if call.is_torch:
        import torch

        output = torch.empty(dot.output_shape, dtype=getattr(torch, dot.output_dtype))
        out_pointer = output.data_ptr()
    else:
        output = _numpy_empty(dot.output_shape, dot.output_dtype)
        out_pointer = output.ctypes.data
    amax_value, _, _ = dot.run_host(backend, call.lhs.pointer, call.rhs.pointer, *call.pointers,
                                    out_pointer)
    return (output, amax_value) if amax else output


def check_current_device(device) -> None:
    import torch

    if device.index != torch.cuda.current_device():
        raise ValueError(f"the arrays are on {device} but the current CUDA device is "
                         f"cuda:{torch.cuda.current_device()}: fp8dot runs on the current device "
                         "(torch.cuda.set_device)")


def _run_cuda(call: PreparedCall, device, amax: bool):
    import torch

    check_current_device(device)
    dot = call.dot
    output = torch.empty(dot.output_shape, dtype=getattr(torch, dot.output_dtype), device=device)
    amax_tensor = torch.empty((), dtype=torch.float32, device=device) if amax else None
    dot.run_cuda(call.lhs.pointer, call.rhs.pointer, *call.pointers, output.data_ptr(),
                 0 if amax_tensor is None else amax_tensor.data_ptr(),
                 torch.cuda.current_stream(device).cuda_stream)
    return (output, amax_tensor) if amax else output


def _numpy_empty(shape, name: str):
    import numpy

    if name in ("float8_e4m3fn", "float8_e5m2", "bfloat16"):
        import ml_dtypes

        return numpy.empty(shape, dtype=getattr(ml_dtypes, name))
    return numpy.empty(shape, dtype=name)


def explain(lhs, rhs, *, backend: str = "auto", **options) -> str:
    """What scaled_dot(lhs, rhs, backend=backend, **options) would run: types, the resolved
    accumulation, scale modes, and on the GPU the CUDA plan: its engine (cuBLASLt, with layouts,
    FAST_ACCUM read back from cuBLASLt and the algorithm, or fp8dot's own kernel and its tile)
    and why the engine was chosen."""
    call = PreparedCall(lhs, rhs, **options)
    return call.dot.explain(call.backend(backend))
