"""fp8dot.torch.cached_weights: quantise each FP8 layer's weight once for many forward passes.

Each forward of an fp8dot.torch.Linear quantises its weight (and, when a gradient will flow to
the input, the weight's transpose for dgrad): a pass over the whole weight that is as long as
the GEMM itself at small M. When the weights do not change between forwards — the micro-batches
of one optimizer step (gradient accumulation), or inference — that work can be done once:

    with ft.cached_weights(model):
        for micro_batch in micro_batches:
            model(micro_batch).sum().backward()
    optimizer.step()

Inside the context a layer reuses the FP8 copies it made from its weight as long as the weight
is the same tensor at the same version: an in-place update through torch (`weight.copy_`,
`load_state_dict`) bumps the version and the next forward quantises again. A torch optimizer's
step drops every copy (an optimizer step hook: the fused AdamW kernels write the weights
without bumping their version). Writes through `weight.data`, and optimizers that write the
weights' memory outside torch.optim's step, are not seen; do not make them inside the context. Leaving the
context drops the copies. Results are bit-identical to quantising every time; weight gradients
are computed as usual (wgrad does not read the quantised weight).

Delayed scaling in eval mode only: in training a delayed-scaling layer records its weight's
amax in its history every forward, which a reused copy would skip, so a model with such a
layer in training mode is refused; in eval mode (inference from a delayed-scaling checkpoint)
the history does not change and its copies are reused like any other (a layer switched to
training inside the context quantises every call again). torch.compile'd regions quantise
every call (the cache is Python state that a compiled graph does not read). Sharded weights
(FSDP2, tensor parallelism) are refused: FSDP2 re-gathers a weight into the same memory without
a version the cache could compare (fp8dot.torch.fp8_all_gather makes that gather FP8 instead).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from torch import nn
from torch.optim.optimizer import register_optimizer_step_post_hook

from .linear import Linear, is_dtensor


@contextlib.contextmanager
def cached_weights(model: nn.Module) -> Iterator[nn.Module]:
    """Within the block, every fp8dot.torch.Linear in `model` quantises its weight once and
    reuses the FP8 copies while the weight is unchanged (the module docstring has the rules).
    Contexts nest: an inner one keeps the outer one's copies."""
    layers = {name: module for name, module in model.named_modules()
              if isinstance(module, Linear)}
    for name, layer in layers.items():
        if is_dtensor(layer.weight):
            raise ValueError(f"cached_weights: layer {name!r} has a sharded weight (a DTensor, "
                             "from FSDP2's fully_shard or tensor parallelism). FSDP2 gathers "
                             "the weight into the same memory at every forward and the "
                             "optimizer's update of the shards is not visible to the cache, so "
                             "it would keep stale copies; tensor-parallel shards are never "
                             "cached. Leave cached_weights out for sharded models")
        if layer.recipe.scaling == "delayed" and layer.training:
            raise ValueError(f"cached_weights: layer {name!r} uses delayed scaling in training "
                             f"mode, which records its weight's amax every forward; cached "
                             f"weights apply to current scaling (tensorwise, rowwise, blocks) "
                             f"and to delayed scaling in eval mode (model.eval())")
    opened = [layer for layer in layers.values() if layer.weight_cache is None]
    for layer in opened:
        layer.weight_cache = {}

    def drop_copies(optimizer, args, kwargs) -> None:
        for layer in layers.values():
            if layer.weight_cache:
                layer.weight_cache.clear()

    stepped = register_optimizer_step_post_hook(drop_copies)
    try:
        yield model
    finally:
        stepped.remove()
        for layer in opened:
            layer.weight_cache = None
