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

from typing import Optional

from . import _core
from ._dot import Precision, explain, precision_pair, scaled_dot, dtype_name
from ._quantize import Quantized, quantize

__version__: str = _core.__version__
cuda_built: bool = _core.cuda_built

__all__ = ["Quantized", "__version__", "cuda_built", "cuda_device", "cuda_unavailable_reason",
           "explain", "quantize", "resolve_accumulation", "resolve_backend", "scaled_dot"]


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
