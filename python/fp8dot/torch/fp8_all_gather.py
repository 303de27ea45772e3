"""fp8dot.torch.fp8_all_gather: FSDP2 gathers each FP8 layer's weight in FP8 — one byte an
element instead of bf16's two or float32's four.

    model = ft.convert(model, ft.Recipe.seed(), amax_reduction_group=dist.group.WORLD)
    ft.fp8_all_gather(model)          # before fully_shard
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)

Without it FSDP2 all-gathers a weight in its dtype (or the MixedPrecisionPolicy's param_dtype)
and every rank then quantises the whole weight. With it each rank quantises only its shard,
before the all-gather, and the layer multiplies the gathered FP8 bytes directly. The shard is
cast with the scale of the whole weight — the shards' amaxes are reduced (max) over the FSDP
group first — so the gathered bytes are exactly those one process casts from the whole weight,
and results equal FSDP2's plain all-gather bit for bit. What is cast is what FSDP2 would have
gathered: the param_dtype copy when a MixedPrecisionPolicy sets one, else the weight itself.

It needs one scale for the whole weight and one FP8 type for the forward GEMM and dgrad (dgrad
multiplies the transpose of the same bytes): tensorwise scaling, as in the seed recipe and
`promoted_everywhere()`, or delayed scaling. Under delayed scaling the shard is cast with the
scale of the layer's amax history (on its first step, whose history is empty, the whole
weight's own), and the gathered weight's amax goes into the history as a plain weight's does,
in the layer's backward: FSDP2 gathers the weight again before the backward, and that gather
casts with the scale the forward's did. Rowwise and block scaling, and a weight two
delayed-scaling layers share, are refused with the reason; so is a gather after a layer's
recipe changed to one of those.

Each gather reduces its weight's amax over the FSDP group first: one small all-reduce per weight
and gather, the backward's gather too. `precompute_fp8_all_gather_scales(model)`, called after
each optimizer step, reduces every such weight's amax in one all-reduce instead, which the
step's gathers then take; a weight written since (the next optimizer step, load_state_dict,
copy_) is reduced at its gather again. Not before the model's first forward: FSDP2 sets up its
shards then, on some ranks into new tensors. The FSDP2 hooks are
`fsdp_pre_all_gather` / `fsdp_post_all_gather` on the tensor each rank's shard is held in
(FSDP2's extension point for tensor subclasses); the optimizer, state_dict() and
torch.distributed.checkpoint see the weight's own values.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn
from torch.utils import _pytree as pytree

from .._arrays import storage_reach
from .amax_reduction import cast_scales, scales_for_amax
from .quantize import quantize

aten = torch.ops.aten

# Ops that make another view or copy of the same weight, which keeps being one: how FSDP2 cuts a
# weight into shards and wraps them (and how nn.Parameter and the optimizer's state copy them).
_SAME_WEIGHT = {aten.detach.default, aten.alias.default, aten.view.default,
                aten._unsafe_view.default, aten.as_strided.default, aten.slice.Tensor,
                aten.split.Tensor, aten.split_with_sizes.default, aten.clone.default,
                aten.empty_like.default, aten.new_zeros.default, aten.new_empty.default,
                aten._to_copy.default, aten._pin_memory.default}
# The views FSDP2 takes of a gathered weight (the parameter's shape out of the padded buffer).
_GATHERED_VIEWS = {aten.detach.default, aten.alias.default, aten.view.default,
                   aten._unsafe_view.default, aten.as_strided.default, aten.slice.Tensor}


def _written(func, args: tuple, kwargs: dict) -> list:
    """The tensors an op writes in place: its arguments marked as written in its schema (a
    foreach op's are lists)."""
    written = []
    for index, argument in enumerate(func._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = args[index] if index < len(args) else kwargs.get(argument.name)
            written += pytree.tree_leaves(value)
    return written


class Fp8AllGatherWeight(torch.Tensor):
    """A weight (in FSDP2, each rank's shard of it) that FSDP2 all-gathers in FP8. It holds the
    weight's values in their own dtype, and every op but FSDP2's all-gather sees those: the
    optimizer updates them, state_dict() saves them."""

    @staticmethod
    def __new__(cls, data: torch.Tensor, fp8_dtype: torch.dtype, shared: bool):
        return torch.Tensor._make_wrapper_subclass(
            cls, data.shape, strides=data.stride(), storage_offset=data.storage_offset(),
            dtype=data.dtype, device=data.device, requires_grad=data.requires_grad)

    def __init__(self, data: torch.Tensor, fp8_dtype: torch.dtype, shared: bool):
        self._data = data
        self._fp8_dtype = fp8_dtype
        self._shared = shared  # by several layers
        # max |weight| over the FSDP group (float32), from precompute_fp8_all_gather_scales;
        # cleared by any write to the weight.
        self._precomputed_amax: Optional[torch.Tensor] = None

    def __repr__(self) -> str:
        return f"Fp8AllGatherWeight({self._data!r}, all-gathered as {self._fp8_dtype})"

    def __tensor_flatten__(self):
        return ["_data"], (self._fp8_dtype, self._shared)

    @staticmethod
    def __tensor_unflatten__(inner, metadata, outer_size, outer_stride):
        return Fp8AllGatherWeight(inner["_data"], *metadata)

    def __reduce_ex__(self, protocol):
        # torch.save and pickling store the values: a checkpoint loads into any model.
        return self._data.__reduce_ex__(protocol)

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        plain_args, plain_kwargs = pytree.tree_map_only(cls, lambda t: t._data, (args, kwargs))
        out = func(*plain_args, **plain_kwargs)
        if func in _SAME_WEIGHT:
            source = next(t for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, cls))
            return pytree.tree_map_only(
                torch.Tensor, lambda t: cls(t, source._fp8_dtype, source._shared), out)
        if func._schema.is_mutable:
            # Written (the optimizer's step, copy_, load_state_dict): a precomputed amax no
            # longer holds.
            for tensor in _written(func, args, kwargs):
                if isinstance(tensor, cls):
                    tensor._precomputed_amax = None
            if isinstance(args[0], cls):
                return args[0]  # updated in place
        return out

    def fsdp_pre_all_gather(self, mesh, outer_size, outer_stride, module, mp_policy):
        """This rank's shard in FP8 with the whole weight's scale, padded to FSDP2's shard size
        (bytes, which every backend gathers); the scale and the whole weight's amax. Every
        gather casts afresh, the backward's too, with the whole weight's amax: the one
        precompute_fp8_all_gather_scales reduced where the weight is unwritten since, else one
        small all-reduce here (every rank alike: all of them precompute and write together).
        Under delayed scaling the amax also goes into the history, and gives the first step's
        scale."""
        weight = self._data
        if tuple(weight.shape[1:]) != tuple(outer_size[1:]):
            raise NotImplementedError(
                f"fp8dot.torch.fp8_all_gather: FSDP2 shards this weight {tuple(outer_size)} along "
                f"another dim than its rows (this rank holds {tuple(weight.shape)}); gathering "
                "in FP8 takes the default row sharding (no shard_placement_fn)")
        if mp_policy.param_dtype is not None and mp_policy.param_dtype != weight.dtype:
            weight = weight.to(mp_policy.param_dtype)  # what FSDP2 would gather
        delayed_scale = self._delayed_scale(module)
        if self._precomputed_amax is not None:
            # The weight's amax in its own dtype rounded to param_dtype is the amax of the
            # weight rounded so: rounding keeps the order of magnitudes.
            amax = self._precomputed_amax.to(weight.dtype).float()
            cast = scales_for_amax(amax, self._fp8_dtype, None, delayed_scale)
        else:
            cast = cast_scales(weight, (mesh.get_group(),), self._fp8_dtype, None, delayed_scale)
        q = (quantize(weight, self._fp8_dtype, "tensor", scale=cast.scale).q.view(torch.uint8)
             if weight.numel() > 0 else weight.new_empty(weight.shape, dtype=torch.uint8))
        missing_rows = -(-outer_size[0] // mesh.size()) - q.shape[0]
        if missing_rows > 0:  # the last ranks' shards are short or empty: FSDP2's shard size
            q = torch.cat([q, q.new_zeros(missing_rows, *q.shape[1:])])
        return (q,), (cast.scale, cast.amax)

    def _delayed_scale(self, layer: nn.Module) -> Optional[torch.Tensor]:
        """The weight's scale from its layer's amax history under delayed scaling (0 while the
        history holds none), else None. FSDP2 gathers again before the backward: the history's
        weight row is unchanged until the layer's backward records this step's amax, so both
        gathers cast with one scale. `layer` is the module FSDP2 names as the weight's owner; a
        recipe changed since fp8_all_gather wrapped the weight is checked again here."""
        from .linear import _WEIGHT, _delayed_scales

        why = _why_not_recipe(layer.recipe)
        if why is None and self._shared and layer.recipe.scaling == "delayed":
            why = _SHARED_UNDER_DELAYED
        if why is not None:
            raise ValueError("fp8dot.torch.fp8_all_gather: a layer's recipe changed since its "
                             f"weight was wrapped, and {why}")
        if layer.recipe.scaling != "delayed":
            return None
        return _delayed_scales(layer.amax_history, layer.recipe)[_WEIGHT]

    def fsdp_post_all_gather(self, all_gather_outputs, metadata, param_dtype, *, out=None):
        """The whole weight in FP8 from the gathered shards; into `out` after the first gather
        (FSDP2 gathers into the same buffer every time: only the scale and amax are new)."""
        (data,), (scale, amax) = all_gather_outputs, metadata
        if out is not None:
            out._scale, out._amax = scale, amax
            return None
        data = data.view(self._fp8_dtype)
        return GatheredFp8Weight(data, scale, param_dtype, amax), (data,)


class GatheredFp8Weight(torch.Tensor):
    """A whole weight as FSDP2 gathered it: FP8 values and their dequantisation scale (tensorwise),
    with the weight's shape and dtype, and max |weight| (what a delayed-scaling history
    records). fp8dot.torch.Linear multiplies the FP8 values directly; any other op sees the
    dequantised weight (FP8 value · scale)."""

    @staticmethod
    def __new__(cls, data: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype,
                amax: torch.Tensor):
        return torch.Tensor._make_wrapper_subclass(
            cls, data.shape, strides=data.stride(), storage_offset=data.storage_offset(),
            dtype=dtype, device=data.device, requires_grad=data.requires_grad)

    def __init__(self, data: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype,
                 amax: torch.Tensor):
        self._data = data
        self._scale = scale
        self._amax = amax

    def __repr__(self) -> str:
        return (f"GatheredFp8Weight({tuple(self.shape)}, {self._data.dtype} with scale "
                f"{self._scale.item():g}, dequantised to {self.dtype})")

    def __tensor_flatten__(self):
        return ["_data", "_scale", "_amax"], (self.dtype,)

    @staticmethod
    def __tensor_unflatten__(inner, metadata, outer_size, outer_stride):
        return GatheredFp8Weight(inner["_data"], inner["_scale"], *metadata, inner["_amax"])

    def dequantised(self) -> torch.Tensor:
        return (self._data.float() * self._scale).to(self.dtype)

    def operand(self, fp8_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(q, scale): the gathered bytes [out, in] — FSDP2's own memory, no copy — and their
        scale; what fp8dot.torch.quantize gives for the whole weight, tensorwise, in
        `fp8_dtype`. The forward GEMM contracts its columns; dgrad takes its transpose."""
        if fp8_dtype != self._data.dtype:
            raise TypeError(f"fp8dot.torch.fp8_all_gather: the layer's recipe multiplies its "
                            f"weight in {fp8_dtype}, but it was gathered in {self._data.dtype}; "
                            "call fp8_all_gather again after changing the recipe")
        return self._data, self._scale

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _GATHERED_VIEWS and isinstance(args[0], cls):
            weight = args[0]
            view = func(weight._data, *args[1:], **kwargs)
            return cls(view, weight._scale, weight.dtype, weight._amax)
        if func._schema.is_mutable and any(isinstance(t, cls) for t in
                                           pytree.tree_leaves((args, kwargs))):
            raise RuntimeError(f"fp8dot.torch.fp8_all_gather: {func} would write into a weight "
                               "that FSDP2 gathered in FP8; update the sharded parameter instead")
        plain_args, plain_kwargs = pytree.tree_map_only(cls, cls.dequantised, (args, kwargs))
        return func(*plain_args, **plain_kwargs)


def regathered_rows(rows: torch.Tensor) -> torch.Tensor:
    """`rows`, a GatheredFp8Weight's bytes that a layer's forward kept for its backward, once
    FSDP2 has gathered them again: it frees them after the forward (their storage shrinks to 0
    bytes) and gathers them back into the same storage before the layer's backward. A backward
    run without that gather would read freed memory: refused here."""
    needed, held = storage_reach(rows)
    if needed > held:
        raise RuntimeError(
            "fp8dot.torch.fp8_all_gather: the backward needs the FP8 weight FSDP2 gathered for the "
            f"forward, but its storage holds {held} of {needed} bytes: "
            "FSDP2 freed it and did not gather it again before this backward (was the backward "
            "run outside FSDP2's hooks?)")
    return rows


def gathers_in_fp8(weight: torch.Tensor) -> bool:
    """Whether `weight` (a layer's parameter; under FSDP2 a DTensor of its shard) is gathered in
    FP8."""
    from .linear import is_dtensor

    return isinstance(weight.to_local() if is_dtensor(weight) else weight, Fp8AllGatherWeight)


_SHARED_UNDER_DELAYED = ("its weight is shared by layers that keep an amax history each under "
                         "delayed scaling: no one scale to gather it with")


def _why_not_recipe(recipe) -> Optional[str]:
    if recipe.scaling not in ("tensorwise", "delayed"):
        return (f"its recipe scales {recipe.scaling!r}; gathering in FP8 needs one scale for "
                "the whole weight (tensorwise or delayed scaling)")
    if recipe.forward.rhs_dtype != recipe.dgrad.rhs_dtype:
        return (f"its recipe multiplies the weight in {recipe.forward.rhs_dtype} forward and "
                f"{recipe.dgrad.rhs_dtype} in dgrad; the gathered bytes serve both only in one "
                "type")
    return None


def _why_not(layer) -> Optional[str]:
    from .linear import is_dtensor

    if (why := _why_not_recipe(layer.recipe)) is not None:
        return why
    if is_dtensor(layer.weight):
        return ("its weight is already sharded (a DTensor): call fp8_all_gather before "
                "fully_shard, and without tensor parallelism")
    return None


def fsdp_has_set_up_its_shards(module) -> bool:
    """Whether FSDP2 has run the lazy initialisation of `module` (an FSDPModule), which puts the
    shards of uneven weights into new tensors on some ranks: read from FSDP2's private state
    (torch 2.11's); where that has another form, a clear error rather than a guess, since an
    amax stored on a shard FSDP2 then replaces would make the ranks' collectives disagree."""
    try:
        group = module._get_fsdp_state()._fsdp_param_group
        return group is None or bool(group._reset_sharded_params)
    except AttributeError as error:
        import torch

        raise RuntimeError(
            "fp8dot.torch.precompute_fp8_all_gather_scales: cannot tell whether FSDP2 has set up "
            f"its shards in torch {torch.__version__} ({error}); fp8dot reads torch 2.11's FSDP2 "
            "state. Leave the scales to the gathers (do not call it) on this torch") from error


def precompute_fp8_all_gather_scales(model: nn.Module) -> None:
    """Reduces the amax of every weight FSDP2 gathers in FP8 in `model` over its FSDP group in one
    all-reduce (a group each), for the gathers until the weight is next written, which then need
    none of their own. Call it on every rank after each optimizer step, as torchao's
    precompute_float8_dynamic_scale_for_fsdp: with L such layers a step then
    makes one amax all-reduce instead of 2L (the forward's gathers and the backward's). The
    gathered bytes, hence the run, are the same to the bit. All ranks must call it together and
    write the weights together: a rank whose weight lost its amax would reduce at its gather
    while the others do not. Refused before the model's first forward, where FSDP2 puts the
    shards of uneven weights into new tensors on some ranks only."""
    from torch.distributed import _functional_collectives as collectives
    from torch.distributed.fsdp import FSDPModule

    from .linear import is_dtensor

    for module in model.modules():
        if isinstance(module, FSDPModule) and not fsdp_has_set_up_its_shards(module):
            raise ValueError(
                "fp8dot.torch.precompute_fp8_all_gather_scales: FSDP2 has not run this model "
                "yet (it sets up its shards at the first forward); call it after each "
                "optimizer step, the first step's gathers reduce their own amaxes")

    shards: dict[int, tuple] = {}  # (local shard, parameter): each weight once
    for parameter in model.parameters():
        local = parameter._local_tensor if is_dtensor(parameter) else parameter
        if isinstance(local, Fp8AllGatherWeight):
            if not is_dtensor(parameter):
                raise ValueError(
                    "fp8dot.torch.precompute_fp8_all_gather_scales: a weight gathered in FP8 is "
                    "not sharded yet; call it after fully_shard")
            shards[id(local)] = (local, parameter)
    if not shards:
        raise ValueError("fp8dot.torch.precompute_fp8_all_gather_scales: the model has no weight "
                         "that FSDP2 gathers in FP8 (fp8dot.torch.fp8_all_gather, then "
                         "fully_shard)")
    by_group: dict = {}
    for local, parameter in shards.values():
        shard_dims = [dim for dim, placement in enumerate(parameter.placements)
                      if placement.is_shard()]
        group = parameter.device_mesh.get_group(shard_dims[0])
        by_group.setdefault(group, []).append(local)
    for group, locals_ in by_group.items():
        data = [local._data.detach() for local in locals_]
        # One kernel for all of them on the GPU; a rank without rows of a weight joins with 0.
        present = [tensor for tensor in data if tensor.numel() > 0]
        norms = iter(torch._foreach_norm(present, float("inf")) if present else [])
        amaxes = torch.stack([next(norms).float() if tensor.numel() > 0 else
                              torch.zeros((), dtype=torch.float32, device=tensor.device)
                              for tensor in data])
        amaxes = collectives.wait_tensor(collectives.all_reduce(amaxes, "max", group))
        for local, amax in zip(locals_, amaxes.unbind()):
            local._precomputed_amax = amax


def fp8_all_gather(model: nn.Module) -> nn.Module:
    """Makes FSDP2 gather every fp8dot.torch.Linear's weight in FP8 (the module docstring says
    how and when). Call it after fp8dot.torch.convert and before fully_shard; returns `model`."""
    from .linear import Linear

    layers = [(name, module) for name, module in model.named_modules()
              if isinstance(module, Linear)]
    if not layers:
        raise ValueError("fp8dot.torch.fp8_all_gather: the model has no fp8dot.torch.Linear "
                         "(call fp8dot.torch.convert first)")
    sharing: dict[int, list] = {}  # a weight's layers, by the weight (a shared one stays shared)
    for name, layer in layers:
        if not isinstance(layer.weight, Fp8AllGatherWeight):
            sharing.setdefault(id(layer.weight), []).append((name or "the model", layer))
    refused = [f"{name}: {why}" for named in sharing.values() for name, layer in named
               if (why := _why_not(layer)) is not None]
    refused += [f"{' and '.join(name for name, _ in named)}: {_SHARED_UNDER_DELAYED}"
                for named in sharing.values()
                if len(named) > 1 and any(layer.recipe.scaling == "delayed" for _, layer in named)]
    if refused:
        raise ValueError("fp8dot.torch.fp8_all_gather cannot gather these layers' weights in "
                         "FP8:\n  " + "\n  ".join(refused))
    for named in sharing.values():
        first = named[0][1]
        weight = nn.Parameter(
            Fp8AllGatherWeight(first.weight.data, first.recipe.forward.rhs_dtype,
                               shared=len(named) > 1),
            requires_grad=first.weight.requires_grad)
        for _, layer in named:
            layer.weight = weight
    return model
