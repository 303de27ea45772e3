"""Registers fp8dot's XLA FFI handlers (src/jax/ffi_handlers.cc) with JAX, once."""

from __future__ import annotations

import functools

import jax

from .. import _core

TARGET = "fp8dot_scaled_dot"


@functools.cache
def register() -> tuple[str, ...]:
    """Registers the handlers of TARGET for every platform they were built for; returns those
    platforms ('cpu', and 'CUDA' when the CUDA backend is built)."""
    handlers = getattr(_core, "xla_ffi_handlers", None)
    if handlers is None:
        raise ImportError(
            "fp8dot was built without its XLA FFI handlers: jaxlib was not installed for the "
            "Python that built it. Install jax, then rebuild fp8dot (pip install . in an "
            "environment with jax, or scripts/build.sh)")
    platforms = []
    for platform, capsule in handlers().items():
        jax.ffi.register_ffi_target(TARGET, capsule, platform=platform)
        platforms.append(platform)
    return tuple(platforms)
