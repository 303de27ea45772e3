"""fp8dot: FP8 matrix products in which the dot's PrecisionConfig decides the accumulation.

    import fp8dot
    fp8dot.resolve_accumulation("float8_e4m3fn", "float8_e4m3fn", ("default", "default"))
    # 'fp8-fast': the forward pass's rule; ("highest", "highest") gives 'fp8-promoted'
    d = fp8dot.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb, out_dtype="bfloat16")
    q = fp8dot.quantize(x, "float8_e4m3fn", "1x128", transposed=True)  # q, scale, q_t, scale_t

numpy arrays run on the CPU backend (an emulation of Hopper's FP8 accumulator by default), torch
CUDA tensors on the GPU through cuBLASLt. `fp8dot.torch` has the torch ops and FP8 layers.
"""

from __future__ import annotations

import sys
import threading
from typing import Optional, Tuple

from . import _core
from ._dot import Precision, explain, precision_pair, scaled_dot, dtype_name
from ._quantize import Quantized, quantize

__version__: str = _core.__version__
cuda_built: bool = _core.cuda_built

__all__ = ["Quantized", "__version__", "cuda_built", "cuda_device", "cuda_unavailable_reason",
           "autotune_setting", "explain", "quantize", "resolve_accumulation", "resolve_backend",
           "scaled_dot", "set_autotune"]


def resolve_accumulation(lhs_dtype, rhs_dtype, precision: Precision = ("default", "default"),
                         algorithm: Optional[str] = None) -> str:
    """The accumulation XLA's rule gives these operand types and PrecisionConfig:
    'fp8-fast', 'fp8-promoted', 'f32', 'bf16x3', ... (ResolveAccumulation in C++)."""
    return _core.resolve_accumulation(dtype_name(lhs_dtype), dtype_name(rhs_dtype),
                                      precision_pair(precision), algorithm)


def cuda_device() -> Optional[str]:
    """The Hopper GPU fp8dot runs on, or None (cuda_unavailable_reason() says why)."""
    return _core.cuda_device()


def cuda_unavailable_reason() -> str:
    return _core.cuda_unavailable_reason()


def resolve_backend(backend: str = "auto") -> str:
    """The backend a name means on this machine ('auto' is 'cuda' with a Hopper GPU)."""
    return _core.resolve_backend(backend)


_autotune_lock = threading.Lock()


def set_autotune(candidates: int, cache_path: Optional[str] = None) -> None:
    """Autotunes the GPU plans fp8dot makes from now on (torch ops and layers, fp8dot.jax,
    scaled_dot on device arrays): each new GEMM is timed on the GPU when its plan is made, over
    cuBLASLt's first `candidates` algorithms and, where it can run the dot, the own kernel's
    tiles; the fastest is kept. 0 (the default) or 1 turns it off. With `cache_path` the
    winners are remembered in that file across processes. Without a call the environment gives
    the setting: FP8DOT_AUTOTUNE=N, FP8DOT_AUTOTUNE_CACHE=path. A GEMM that has run keeps its
    plan; make a GEMM's first call outside a CUDA graph capture (a race cannot be captured).
    docs/python.md has the details."""
    if isinstance(candidates, bool) or not isinstance(candidates, int):
        raise TypeError(f"fp8dot.set_autotune: candidates must be an int, not {candidates!r}")
    with _autotune_lock:  # both copies of the setting change together
        _core.set_autotune(candidates, cache_path or "")
        torch_ops = sys.modules.get("fp8dot.torch.ops")
        if torch_ops is not None:
            torch_ops._set_native_autotune(candidates, cache_path or "")


def autotune_setting() -> Tuple[int, str]:
    """(candidates, cache_path) of the autotuning new plans get (set_autotune; 0 = off)."""
    return _core.autotune_setting()
