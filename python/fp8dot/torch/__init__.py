"""fp8dot for PyTorch: FP8 linear layers whose forward GEMM is fast and whose gradient GEMMs are
promoted (the seed's rule), torch ops that torch.compile traces without graph breaks, and the
quantisation they use.

    import fp8dot.torch as ft
    model = ft.convert(model, recipe=ft.Recipe.seed())   # nn.Linear -> ft.Linear
    print(ft.explain(model))                             # every GEMM and its accumulation
"""

from . import ops
from .convert import convert, explain
from .fp8_all_gather import fp8_all_gather, precompute_fp8_all_gather_scales
from .linear import Linear
from .quantize import quantize, quantize_blocks, quantize_rowwise, quantize_tensorwise
from .recipe import E4M3, E5M2, GemmConfig, Recipe
from .weight_cache import cached_weights

scaled_mm = ops.scaled_mm

__all__ = ["E4M3", "E5M2", "GemmConfig", "Linear", "Recipe", "cached_weights", "convert",
           "explain", "fp8_all_gather", "precompute_fp8_all_gather_scales", "quantize",
           "quantize_blocks", "quantize_rowwise", "quantize_tensorwise", "scaled_mm"]
