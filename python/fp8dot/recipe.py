"""FP8 training recipes, for every framework: for each of a linear layer's three GEMMs, the FP8
formats and the PrecisionConfig, plus how tensors are scaled.

    forward  Y  = X · Wᵀ     lhs X  (activations), rhs W
    dgrad    dX = dY · W     lhs dY (gradients),   rhs W
    wgrad    dW = dYᵀ · X    lhs dY,               rhs X

The precision pair of each GEMM means what XLA's PrecisionConfig means; the accumulation it gets
is fp8dot.resolve_accumulation's answer (C++ ResolveAccumulation), never decided here. The
seed's rule, Recipe.seed(): the forward GEMM at DEFAULT (fast accumulation), both gradient GEMMs
at HIGHEST (promoted to FP32), gradients in e5m2 ("hybrid" formats).

Scalings:
    tensorwise  current scaling: one scale per tensor from its amax in this step
    delayed     one scale per tensor from an amax history (length, margin, max or most recent),
                kept in the layer's state so a resumed checkpoint continues bit-identically
    rowwise     one scale per row of each GEMM operand along its contracting dim
    blocks      DeepSeek-V3: 1×128 blocks for activations and gradients, 128×128 for weights
                (needs promoted accumulation in every GEMM: Recipe.deepseek_blocks())

fp8dot.torch.Recipe and fp8dot.jax.Recipe are this class with the framework's FP8 dtypes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Optional

from . import resolve_accumulation
from ._dot import dtype_name

SCALINGS = ("tensorwise", "delayed", "rowwise", "blocks")
GEMMS = ("forward", "dgrad", "wgrad")


@dataclass(frozen=True)
class GemmConfig:
    """One GEMM's operand formats (framework dtypes) and PrecisionConfig."""

    lhs_dtype: Any
    rhs_dtype: Any
    precision: tuple[str, str]
    algorithm: Optional[str] = None

    @property
    def accumulation(self) -> str:
        """'fp8-fast' or 'fp8-promoted' (ResolveAccumulation's answer)."""
        return resolve_accumulation(self.lhs_dtype, self.rhs_dtype, self.precision, self.algorithm)


@dataclass(frozen=True)
class Recipe:
    forward: GemmConfig
    dgrad: GemmConfig
    wgrad: GemmConfig
    scaling: str = "tensorwise"
    # Delayed scaling only.
    amax_history_length: int = 16
    amax_compute: str = "max"  # "max" over the history or "most_recent"
    margin: int = 0  # scale = amax · 2^margin / fp8_max
    # Host arrays: the CPU path ("cpu" is the emulation of the resolved accumulation, "cpu-blas"
    # fast f32 accumulation); GPU arrays always run on the GPU.
    backend: str = "auto"

    # The framework's FP8 dtypes (set by fp8dot.torch.Recipe / fp8dot.jax.Recipe).
    E4M3: ClassVar[Any] = "float8_e4m3fn"
    E5M2: ClassVar[Any] = "float8_e5m2"

    def __post_init__(self):
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling {self.scaling!r} is not one of {', '.join(SCALINGS)}")
        if self.amax_compute not in ("max", "most_recent"):
            raise ValueError(f"amax_compute {self.amax_compute!r} is not 'max' or 'most_recent'")
        if self.amax_history_length < 1:
            raise ValueError(f"amax_history_length must be >= 1, got {self.amax_history_length}")
        for name in GEMMS:
            config = getattr(self, name)
            accumulation = config.accumulation  # raises for a type pair or algorithm that does not apply
            if not accumulation.startswith("fp8-"):
                raise ValueError(f"{name}: {config.lhs_dtype} x {config.rhs_dtype} is not an FP8 GEMM")
            if self.scaling == "blocks" and accumulation == "fp8-fast":
                raise ValueError(
                    f"{name}: block scales need promoted accumulation, but precision "
                    f"{config.precision} resolves to fp8-fast; use Recipe.deepseek_blocks() or "
                    "precision ('highest', 'highest')")

    # ---- The named recipes -------------------------------------------------------------------
    @classmethod
    def seed(cls, scaling: str = "tensorwise", gradient_dtype=None, **options) -> "Recipe":
        """The seed's rule: forward DEFAULT (fast), dgrad and wgrad HIGHEST (promoted)."""
        return cls._uniform(("default", "default"), ("highest", "highest"), scaling,
                            gradient_dtype, **options)

    @classmethod
    def fast_everywhere(cls, scaling: str = "tensorwise", gradient_dtype=None,
                        **options) -> "Recipe":
        return cls._uniform(("default", "default"), ("default", "default"), scaling,
                            gradient_dtype, **options)

    @classmethod
    def promoted_everywhere(cls, scaling: str = "tensorwise", gradient_dtype=None,
                            **options) -> "Recipe":
        return cls._uniform(("highest", "highest"), ("highest", "highest"), scaling,
                            gradient_dtype, **options)

    @classmethod
    def deepseek_blocks(cls, gradient_dtype=None, **options) -> "Recipe":
        """DeepSeek-V3's fine-grained scaling: e4m3 everywhere, 1×128 / 128×128 blocks, every
        GEMM promoted (block scales are applied at each 128-K promotion)."""
        return cls._uniform(("highest", "highest"), ("highest", "highest"), "blocks",
                            cls.E4M3 if gradient_dtype is None else gradient_dtype, **options)

    @classmethod
    def _uniform(cls, forward_precision, gradient_precision, scaling, gradient_dtype, **options):
        gradient_dtype = cls.E5M2 if gradient_dtype is None else gradient_dtype
        return cls(forward=GemmConfig(cls.E4M3, cls.E4M3, forward_precision),
                   dgrad=GemmConfig(gradient_dtype, cls.E4M3, gradient_precision),
                   wgrad=GemmConfig(gradient_dtype, cls.E4M3, gradient_precision),
                   scaling=scaling, **options)

    def replace(self, **changes) -> "Recipe":
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        parts = [f"scaling={self.scaling}"]
        for name in GEMMS:
            config = getattr(self, name)
            parts.append(f"{name}={short_dtype_name(config.lhs_dtype)}x"
                         f"{short_dtype_name(config.rhs_dtype)}:{config.accumulation}")
        return " ".join(parts)


def short_dtype_name(dtype) -> str:
    """'e4m3', 'e5m2', or the dtype's own name ('bfloat16')."""
    name = dtype_name(dtype).removeprefix("torch.")
    return {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}.get(name, name)


def wrong_recipe_error(recipe, where: str, expected: str) -> TypeError:
    """The error for a `recipe` argument that is not the framework's recipe class `expected`
    ("fp8dot.torch.Recipe"): it says what was passed (a recipe's name, the other framework's
    recipe)."""
    return TypeError(f"{where}: recipe must be an {expected} (e.g. {expected}.seed()), got "
                     f"{type(recipe).__module__}.{type(recipe).__name__} {str(recipe)[:60]!r}")
