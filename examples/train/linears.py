"""Which linear layers the blocks' projections use: bf16 nn.Linear, fp8dot, or torchao.

The FP8 libraries are imported only when asked for, so the bf16 baseline runs on a machine
that has neither.
"""

from __future__ import annotations

from torch import nn

from gpt import is_block_projection

LINEARS = ("bf16", "fp8dot", "torchao")

# --recipe name -> (fp8dot.torch.Recipe constructor, scaling), and what it means.
FP8DOT_RECIPES = {
    "seed": ("seed", "tensorwise", "forward fast, dgrad/wgrad promoted; tensorwise current scaling"),
    "fast": ("fast_everywhere", "tensorwise", "fast accumulation in all three GEMMs; tensorwise"),
    "promoted": ("promoted_everywhere", "tensorwise", "promoted accumulation in all three GEMMs; tensorwise"),
    # Block scales are applied at each 128-K promotion, so every GEMM is promoted (and e4m3).
    "blocks": ("deepseek_blocks", None, "DeepSeek-V3: 1x128 activations/gradients, 128x128 weights, all promoted"),
    "rowwise": ("seed", "rowwise", "seed rule; per-row scales"),
    "delayed": ("seed", "delayed", "seed rule; delayed (amax history) tensorwise scaling"),
    "fast-delayed": ("fast_everywhere", "delayed", "fast accumulation in all three GEMMs; delayed scaling"),
}


# --recipe name for --linear torchao -> which GEMMs get fast accumulation, and what it means.
# torchao's default Float8LinearConfig is the seed's rule with tensorwise current scaling.
TORCHAO_RECIPES = {
    "seed": ((True, False, False), "default config: forward fast, dgrad/wgrad promoted; tensorwise"),
    "fast": ((True, True, True), "fast accumulation in all three GEMMs; tensorwise"),
}


def fp8dot_recipe(recipe_class, name: str):
    """The --recipe `name` as an instance of recipe_class: fp8dot.torch.Recipe or
    fp8dot.jax.Recipe (the same recipes with each framework's FP8 dtypes; train_flax.py uses
    this table too)."""
    constructor, scaling, _ = FP8DOT_RECIPES[name]
    return getattr(recipe_class, constructor)(**({} if scaling is None else {"scaling": scaling}))


def swap_block_linears(model: nn.Module, linear: str, recipe: str,
                       recompute_weight_transpose: bool = False) -> str:
    """Swaps the blocks' nn.Linear projections in place for the chosen implementation (the
    embeddings and LM head are never swapped: see gpt.py). Returns a text description of what
    the model now runs, for the log. Call before torch.compile. recompute_weight_transpose:
    fp8dot's layers cast Wᵀ again in the backward instead of keeping it."""
    if linear == "bf16":
        return "bf16: torch.nn.Linear everywhere (bf16 autocast)"
    if linear == "fp8dot":
        import fp8dot.torch as ft  # only here: bf16 runs need no fp8dot

        ft.convert(model, recipe=fp8dot_recipe(ft.Recipe, recipe), module_filter=is_block_projection,
                   recompute_weight_transpose=recompute_weight_transpose)
        return f"fp8dot recipe {recipe!r} ({FP8DOT_RECIPES[recipe][2]})\n{ft.explain(model)}"
    if linear == "torchao":
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training  # the peer
        from torchao.float8.config import Float8GemmConfig

        if recipe not in TORCHAO_RECIPES:
            raise ValueError(f"torchao recipe {recipe!r}: expected one of {sorted(TORCHAO_RECIPES)}")
        (output, grad_input, grad_weight), meaning = TORCHAO_RECIPES[recipe]
        config = Float8LinearConfig(
            gemm_config_output=Float8GemmConfig(use_fast_accum=output),
            gemm_config_grad_input=Float8GemmConfig(use_fast_accum=grad_input),
            gemm_config_grad_weight=Float8GemmConfig(use_fast_accum=grad_weight))
        # torchao's filter takes (module, fqn), fp8dot's (fqn, module).
        convert_to_float8_training(model, config=config,
                                   module_filter_fn=lambda module, fqn: is_block_projection(fqn, module))
        swapped = sum(type(m).__name__ == "Float8Linear" for m in model.modules())
        return (f"torchao convert_to_float8_training, recipe {recipe!r} ({meaning}): {swapped} "
                "Float8Linear layers")
    raise ValueError(f"unknown linear {linear!r}; expected one of {LINEARS}")
