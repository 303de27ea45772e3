"""fp8dot.torch.Linear under tensor parallelism: torch's own ColwiseParallel and RowwiseParallel
(torch.distributed.tensor.parallel) shard the layer's weight as a DTensor and hand it DTensor
inputs; the layer runs its three FP8 GEMMs on the local shards and returns a DTensor that says
how the result is laid out, so the parallel styles do the communication as they do for
nn.Linear.

    column-parallel  W Shard(0) [N/p, K], X Replicate      -> Y Shard(-1)  (dX partial sums)
    row-parallel     W Shard(1) [N, K/p], X Shard(-1)      -> Y Partial    (summed by the style)

Each GEMM is the single-process GEMM's slice: column-parallel computes whole dot products
(bit-identical outputs), row-parallel partial sums over K that the style adds. Tensorwise and
delayed scales span the shards, so their amaxes are reduced over the mesh (W always; X under
row-parallel; dY under column-parallel) and every rank casts with the single process's scale.
Block scales stay within a shard when its edge is a multiple of 128; row scales would span
shards and are refused.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard

from .amax_reduction import AmaxReduction

BLOCK = 128


def _describe(placements) -> str:
    return "(" + ", ".join(str(p) for p in placements) + ")"


def _is_shard(placement, dim: int, ndim: int) -> bool:
    return isinstance(placement, Shard) and placement.dim % ndim == dim % ndim


def run_sharded(layer, x, up: Optional[torch.Tensor], activation: Optional[str]):
    """layer(x) (or its swiglu / gelu form) where the weight or x is a DTensor."""
    name = f"fp8dot.torch.Linear({layer.in_features}, {layer.out_features})"
    weight, bias = layer.weight, layer.bias
    if not isinstance(weight, DTensor):
        raise TypeError(f"{name}: the input is a DTensor but the weight is not; shard the layer "
                        "with torch's ColwiseParallel / RowwiseParallel (parallelize_module)")
    mesh = weight.device_mesh
    if mesh.ndim != 1:
        raise ValueError(f"{name}: the weight is a DTensor on a {mesh.ndim}-D mesh; the layer "
                         "runs on one tensor-parallel mesh dimension (FSDP2 gathers its own)")
    placement = weight.placements[0]
    if isinstance(placement, Replicate):
        style = "replicated"
    elif _is_shard(placement, 0, 2):
        style = "column"
    elif _is_shard(placement, 1, 2):
        style = "row"
    else:
        raise ValueError(f"{name}: the weight's placement {_describe(weight.placements)} is "
                         "not Shard(0) (column-parallel), Shard(1) (row-parallel) or Replicate")
    if style != "replicated":
        _check_scaling(name, layer.recipe, style, layer.out_features, layer.in_features,
                       mesh.size())
    expected = {"column": Replicate(), "row": Shard(-1), "replicated": Replicate()}[style]

    def local_input(tensor, what):
        if tensor is None:
            return None
        if not isinstance(tensor, DTensor):
            raise TypeError(f"{name}: the {what} is a plain tensor but the weight is sharded "
                            f"({_describe(weight.placements)}); hand it a DTensor "
                            "(ColwiseParallel / RowwiseParallel do)")
        ndim = tensor.ndim
        actual = tensor.placements[0]
        if tensor.device_mesh != mesh or not (
                isinstance(actual, Replicate) and isinstance(expected, Replicate) or
                isinstance(expected, Shard) and _is_shard(actual, -1, ndim)):
            raise ValueError(f"{name}: a {style}-parallel layer takes its {what} as "
                             f"({expected}) on the weight's mesh, got "
                             f"{_describe(tensor.placements)}")
        # Column-parallel: each rank's dX is its shard's share of the sum.
        return tensor.to_local(grad_placements=[Partial()] if style == "column" else None)

    x_local, up_local = local_input(x, "input"), local_input(up, "up")
    group = mesh.get_group()
    tensor_parallel = AmaxReduction(
        input=(group,) if style == "row" else (),
        weight=(group,) if style != "replicated" else (),
        grad_output=(group,) if style == "column" else ())
    # A row-parallel bias (replicated) is added once, to the sum, below.
    bias_local = bias.to_local() if bias is not None and style != "row" else None
    output = layer.run_local(x_local, up_local, activation, weight.to_local(), bias_local,
                             layer.amax_reduction(tensor_parallel))
    if not torch.compiler.is_compiling():  # for explain()
        layer.__dict__["last_tensor_parallel"] = (
            None if style == "replicated" else (f"{style}-parallel", mesh.size()))
    placements = {"column": [Shard(output.ndim - 1)], "row": [Partial()],
                  "replicated": [Replicate()]}[style]
    result = DTensor.from_local(output, mesh, placements, run_check=False)
    if bias is not None and style == "row":
        result = result + bias.to(result.dtype)
    return result


def _check_scaling(name: str, recipe, style: str, out_features: int, in_features: int,
                   shards: int) -> None:
    """Refuses scalings whose scales would span the shards without a reduction for them."""
    if recipe.scaling == "rowwise":
        raise ValueError(f"{name}: rowwise scaling under tensor parallelism: a row's scale "
                         "would span the shards (column-parallel: Wᵀ's and dY's rows; "
                         "row-parallel: X's and W's); use tensorwise, delayed or blocks")
    if recipe.scaling == "blocks":
        features, what = ((out_features, "out_features") if style == "column"
                          else (in_features, "in_features"))
        if features % (BLOCK * shards):
            raise ValueError(f"{name}: {style}-parallel block scaling over {shards} shards "
                             f"needs {what} a multiple of {BLOCK} x {shards} (each shard "
                             f"whole 128-blocks), got {features}")
