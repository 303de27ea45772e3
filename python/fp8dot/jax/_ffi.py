"""Registers fp8dot's XLA FFI handlers (src/jax/ffi_handlers.cc) with JAX, once."""

from __future__ import annotations

import functools

import jax

from .. import _core

TARGET = "fp8dot_scaled_dot"
QUANTIZE_TARGET = "fp8dot_quantize"


@functools.cache
def register() -> tuple[str, ...]:
    """Registers the handlers of every target for every platform they were built for; returns
    those platforms ('cpu', and 'CUDA' when the CUDA backend is built)."""
    handlers = getattr(_core, "xla_ffi_handlers", None)
    if handlers is None:
        raise ImportError(
            "fp8dot was built without its XLA FFI handlers: jaxlib was not installed for the "
            "Python that built it. Install jax, then rebuild fp8dot (pip install . in an "
            "environment with jax, or scripts/build.sh)")
    platforms = set()
    for target, by_platform in handlers().items():
        for platform, capsule in by_platform.items():
            jax.ffi.register_ffi_target(target, capsule, platform=platform)
            platforms.add(platform)
    return tuple(sorted(platforms))
