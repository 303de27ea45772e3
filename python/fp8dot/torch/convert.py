"""fp8dot.torch.convert and explain: swap a model's nn.Linear layers for FP8 ones and list what
each will run."""

from __future__ import annotations

from typing import Callable, Optional

import torch
from torch import nn

from .._dot import make_dot
from .fp8_all_gather import gathers_in_fp8
from .linear import Linear, gemm_call
from .recipe import GEMMS, Recipe, check_recipe, short_dtype_name

ModuleFilter = Callable[[str, nn.Module], bool]


def convert(model: nn.Module, recipe: Optional[Recipe] = None,
            module_filter: Optional[ModuleFilter] = None, *,
            amax_reduction_group=None, recompute_weight_transpose: bool = False) -> nn.Module:
    """Replaces, in place, every nn.Linear (not its other subclasses) for which
    module_filter(fully_qualified_name, module) is true with an fp8dot.torch.Linear sharing its
    parameters; fp8dot.torch.Linear layers the filter selects take the recipe too (a different
    recipe starts a delayed-scaling history afresh). Returns the model. Any in/out features
    work with every recipe (block scaling gives a partial last block its own scale).
    amax_reduction_group: the torch.distributed group the batch is split over (data
    parallelism), whose tensorwise and delayed scales become the whole batch's
    (fp8dot.torch.Linear; docs/distributed.md). Convert after init_process_group: before it,
    dist.group.WORLD is None, which means no reduction. recompute_weight_transpose: the layers
    cast Wᵀ again in the backward instead of keeping it from the forward (fp8dot.torch.Linear's
    "Memory")."""
    recipe = check_recipe(Recipe.seed() if recipe is None else recipe, "fp8dot.torch.convert")
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if type(child) is not nn.Linear and not isinstance(child, Linear):
                continue
            fqn = f"{name}.{child_name}" if name else child_name
            if module_filter is not None and not module_filter(fqn, child):
                continue
            if isinstance(child, Linear):
                if child.recipe != recipe:
                    child._set_recipe(recipe)
                child.amax_reduction_group = amax_reduction_group
                child.recompute_weight_transpose = recompute_weight_transpose
            else:
                setattr(module, child_name,
                        Linear.from_linear(child, recipe, amax_reduction_group,
                                           recompute_weight_transpose))
    return model


def _engine(layer: Linear, gemm: str, shape: tuple) -> str:
    """What runs the GEMM: the CPU backend, or on the GPU the engine the CUDA plan for the call
    the layer makes takes (cuBLASLt or fp8dot's own kernel and tile: the C++ plan decides, for
    the layer's GPU and this shape, bias and output type)."""
    recipe = layer.recipe
    if not layer.weight.is_cuda:
        return {"auto": "cpu-emulation", "cpu": "cpu-emulation"}.get(recipe.backend,
                                                                     recipe.backend)
    if layer.last_input_shape is None:
        return "cuda (the engine depends on M: run the model once)"
    input_dtype, output_dtype = layer.last_dtypes
    # As _Fp8Linear: the forward writes the output dtype (plus the bias), dgrad the input's
    # dtype, wgrad the weight's.
    out_dtype = {"forward": output_dtype, "dgrad": input_dtype, "wgrad": layer.weight.dtype}[gemm]
    has_bias = gemm == "forward" and layer.bias is not None
    call = gemm_call(recipe, gemm, *shape, out_dtype, out_dtype if has_bias else None)
    dot = make_dot(call.lhs, call.rhs, None, tuple(getattr(recipe, gemm).precision), None,
                   str(call.out_dtype), call.lhs_scale, call.rhs_scale, None, None, call.bias,
                   None, None, 1.0, 0.0, False, False)
    with torch.cuda.device(layer.weight.device):
        return dot.cuda_engine()


def explain(model: nn.Module) -> str:
    """A table of every fp8dot layer's three GEMMs: shapes (from the last input seen, else with
    M = tokens), formats, scales, precision, the resolved accumulation and the engine (on the
    GPU, the one the CUDA plan for that GEMM takes: cuBLASLt, or fp8dot's own kernel)."""
    rows = [("layer", "gemm", "shape M×N×K", "lhs × rhs", "scales", "precision", "accumulation",
             "engine")]
    for name, module in model.named_modules():
        if not isinstance(module, Linear):
            continue
        recipe = module.recipe
        tokens = "M"
        if module.last_input_shape is not None:
            tokens = 1
            for d in module.last_input_shape[:-1]:
                tokens *= d
        # A tensor-parallel layer's GEMMs are its shard's (FSDP2 gathers whole weights).
        n, k = module.last_weight_shape or (module.out_features, module.in_features)
        if module.last_tensor_parallel is not None:
            name += " ({} over {})".format(*module.last_tensor_parallel)
        if gathers_in_fp8(module.weight):
            name += " (W gathered in FP8)"  # forward and dgrad read the gathered bytes
        elif module.recompute_weight_transpose:
            name += " (Wᵀ cast again in the backward)"
        shapes = {"forward": (tokens, n, k), "dgrad": (tokens, k, n), "wgrad": (n, k, tokens)}
        scales = _scale_names(recipe)
        for gemm in GEMMS:
            config = getattr(recipe, gemm)
            rows.append((name, gemm, "×".join(str(d) for d in shapes[gemm]),
                         f"{short_dtype_name(config.lhs_dtype)} × {short_dtype_name(config.rhs_dtype)}", scales[gemm],
                         ",".join(config.precision), config.accumulation,
                         _engine(module, gemm, shapes[gemm])))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _scale_names(recipe: Recipe) -> dict[str, str]:
    if recipe.scaling in ("tensorwise", "delayed"):
        name = "tensor" + (" (delayed)" if recipe.scaling == "delayed" else "")
        return {gemm: f"{name} × {name}" for gemm in GEMMS}
    if recipe.scaling == "rowwise":
        return {gemm: "row × row" for gemm in GEMMS}
    return {"forward": "1x128 × 128x128", "dgrad": "1x128 × 128x128", "wgrad": "1x128 × 1x128"}
