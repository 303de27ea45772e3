"""The multi-process runs of test_torch_distributed.py and the single-process references they are
held against: the same model, data and steps, on the CPU backend with torch.distributed's gloo.

    python -m torch.distributed.run --standalone --nproc-per-node 2 \\
        tests/python/distributed_runs.py OUT_DIR

runs every scenario on 2 ranks and writes rank 0's results (and what each rank saw, where the
ranks must agree) to OUT_DIR/results.pt. With FP8DOT_DISTRIBUTED_DEVICE=cuda each rank takes its
own GPU (LOCAL_RANK) and NCCL; by default the CPU and gloo. A scenario is a wrapper (DDP,
FSDP2, tensor parallel) with a recipe; each runs STEPS forward and backward passes of a
two-layer MLP on fresh data per step, with the weights held still (no optimizer), so that every
step's gradients compare with the single process's on the same global batch, and a
delayed-scaling history sees amaxes of different steps.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import sys

import torch
from torch import nn

import fp8dot.torch as ft
from saved_tensors import fp8_bytes_kept_for_the_backward

FEATURES, HIDDEN = 256, 512  # each tensor-parallel shard holds whole 128-blocks
ROWS_PER_RANK = 128  # whole 1x128 blocks along the wgrad's contracting dim on every rank
STEPS = 3
WORLD = 2
DEVICE = os.environ.get("FP8DOT_DISTRIBUTED_DEVICE", "cpu")  # "cuda": NCCL, a GPU per rank
# Data parallelism splits the tokens: each GEMM's K is whole, or (wgrad) split at 128-blocks
# whose promoted sums add in f32. Row-parallel splits the forward's K too, where the seed's fast
# accumulation rounds differently from the whole K's (by its own error, tolerances.py): the
# tensor-parallel runs use recipes promoted everywhere, and the seed's forward alone.
DATA_PARALLEL_RECIPES = ("tensorwise", "delayed", "blocks")
TENSOR_PARALLEL_RECIPES = ("tensorwise promoted", "delayed promoted", "blocks")


def recipe(name: str) -> ft.Recipe:
    return {"tensorwise": ft.Recipe.seed(),
            "delayed": ft.Recipe.seed(scaling="delayed", amax_history_length=4),
            "tensorwise promoted": ft.Recipe.promoted_everywhere(),
            "delayed promoted": ft.Recipe.promoted_everywhere(scaling="delayed",
                                                               amax_history_length=4),
            "blocks": ft.Recipe.deepseek_blocks(),
            "rowwise": ft.Recipe.seed(scaling="rowwise")}[name]


def model(recipe_name: str) -> nn.Sequential:
    """Linear(256 -> 512), GELU, Linear(512 -> 256) in FP8, the same weights in every process."""
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, FEATURES))
    return ft.convert(mlp.to(device()), recipe(recipe_name))


def device() -> torch.device:
    """This process's device: the CPU, or under torchrun with DEVICE "cuda" the GPU of its
    local rank (the single-process references: the current GPU)."""
    if DEVICE == "cpu":
        return torch.device("cpu")
    return torch.device("cuda", int(os.environ.get("LOCAL_RANK", torch.cuda.current_device())))


@functools.cache
def world_mesh():
    """The ranks' 1-D mesh on DEVICE's type, for FSDP2 and tensor parallelism alike. fully_shard
    without one builds it on the machine's accelerator, so the CPU runs on a 1-GPU machine asked
    CUDA for a second device."""
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh(DEVICE, (WORLD,))


def batch(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rank `rank`'s rows of step `step`'s global batch (input, target). The second rank's rows
    are 4x larger, so that the ranks' own amaxes, and the scales they would take, differ."""
    generator = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(ROWS_PER_RANK, FEATURES, generator=generator) * (1 + 3 * rank)
    target = torch.randn(ROWS_PER_RANK, FEATURES, generator=generator)
    return x.to(device()), target.to(device())


def global_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    parts = [batch(step, rank) for rank in range(WORLD)]
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def histories(mlp: nn.Module) -> list[torch.Tensor]:
    return [m.amax_history.clone() for m in mlp.modules()
            if isinstance(m, ft.Linear) and m.amax_history is not None]


def full(tensor: torch.Tensor) -> torch.Tensor:
    """A gradient or weight as one tensor (a DTensor's whole value)."""
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


def steps(mlp: nn.Module, data) -> dict:
    """STEPS passes with the mean squared error over the rows given; per step the loss and every
    parameter's gradient (then cleared); at the end the delayed-scaling histories."""
    out = {"loss": [], "grads": []}
    for step in range(STEPS):
        x, target = data(step)
        loss = ((mlp(x) - target) ** 2).mean()
        loss.backward()
        out["loss"].append(loss.detach().clone())
        out["grads"].append([full(p.grad).clone() for p in mlp.parameters()])
        mlp.zero_grad(set_to_none=True)
    out["histories"] = histories(mlp)
    return out


def single_process(recipe_name: str) -> dict:
    """The reference: one process, the whole global batch (results on the CPU)."""
    return _on_cpu(steps(model(recipe_name), global_batch))


# ---- The ranks' side ---------------------------------------------------------------------------

def _mean_over_ranks(value: torch.Tensor) -> torch.Tensor:
    value = value.detach().clone()
    torch.distributed.all_reduce(value)
    return value / WORLD


def data_parallel(wrapper: str, recipe_name: str, reduce_amax: bool = True,
                  recompute_weight_transpose: bool = False) -> dict:
    """DDP or FSDP2 over all ranks, each with its rows of the global batch; the loss reported is
    the mean over ranks (the global batch's). Every rank's histories are kept, to compare, and
    (last, a forward without a backward) the FP8 bytes a forward keeps for the backward."""
    import torch.distributed as dist
    rank = dist.get_rank()
    mlp = model(recipe_name)
    group = dist.group.WORLD if reduce_amax else None
    ft.convert(mlp, recipe(recipe_name), amax_reduction_group=group,
               recompute_weight_transpose=recompute_weight_transpose)
    if wrapper == "ddp":
        mlp = nn.parallel.DistributedDataParallel(mlp)
    else:
        from torch.distributed.fsdp import fully_shard
        for layer in (mlp[0], mlp[2]):
            fully_shard(layer, mesh=world_mesh())
        fully_shard(mlp, mesh=world_mesh())
    out = steps(mlp, lambda step: batch(step, rank))
    out["loss"] = [_mean_over_ranks(loss) for loss in out["loss"]]
    gathered = [None] * WORLD
    dist.all_gather_object(gathered, out["histories"])
    out["histories_per_rank"] = gathered
    out["fp8_bytes_kept"] = fp8_bytes_kept_for_the_backward(mlp, batch(0, rank)[0])
    return out


def _tensor_parallel_model(recipe_name: str, recompute_weight_transpose: bool = False
                           ) -> nn.Module:
    """The first layer column-parallel, the second row-parallel (torch's own styles)."""
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)
    mlp = model(recipe_name)
    for layer in (mlp[0], mlp[2]):
        layer.recompute_weight_transpose = recompute_weight_transpose
    return parallelize_module(mlp, world_mesh(), {"0": ColwiseParallel(), "2": RowwiseParallel()})


def tensor_parallel(recipe_name: str, recompute_weight_transpose: bool = False) -> dict:
    """The tensor-parallel MLP on the whole global batch on every rank, and its explain()."""
    mlp = _tensor_parallel_model(recipe_name, recompute_weight_transpose)
    out = steps(mlp, global_batch)
    out["explain"] = ft.explain(mlp)
    return out


def tensor_parallel_forward(recipe_name: str) -> torch.Tensor:
    """The tensor-parallel MLP's output for the first step's global batch."""
    with torch.no_grad():
        return _tensor_parallel_model(recipe_name)(global_batch(0)[0]).clone()


def tensor_parallel_refusal(recipe_name: str, hidden: int) -> str:
    """The error a column-parallel layer gives for a recipe it cannot shard ('' if none)."""
    from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module
    layer = ft.Linear(FEATURES, hidden, recipe=recipe(recipe_name), device=device())
    parallelize_module(layer, world_mesh(), ColwiseParallel())
    try:
        layer(torch.randn(4, FEATURES, device=device()))
    except ValueError as error:
        return str(error)
    return ""


def empty_rank(recipe_name: str) -> dict:
    """DDP where rank 1 has no rows in the second step (its peers' reductions must not wait
    forever): the losses and gradients of the rows there are."""
    import torch.distributed as dist
    rank = dist.get_rank()
    mlp = nn.parallel.DistributedDataParallel(model(recipe_name))
    ft.convert(mlp.module, recipe(recipe_name), amax_reduction_group=dist.group.WORLD)
    out = {"grads": []}
    for step in range(STEPS):
        x, target = empty_rank_data(step, rank)
        output = mlp(x)
        # The sum over this rank's rows (0 for none), so that DDP's mean of the ranks'
        # gradients is the gradient of the sum over all rows / WORLD.
        loss = ((output - target) ** 2).sum()
        loss.backward()
        out["grads"].append([p.grad.clone() for p in mlp.parameters()])
        mlp.zero_grad(set_to_none=True)
    out["histories"] = histories(mlp.module)
    return out


def empty_rank_data(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """empty_rank's rows: rank 1 has none in the second step."""
    x, target = batch(step, rank)
    return (x[:0], target[:0]) if step == 1 and rank == 1 else (x, target)


def empty_rank_reference(recipe_name: str) -> dict:
    """One process, the rows the ranks of empty_rank have, the loss summed over them."""
    mlp = model(recipe_name)
    out = {"grads": []}
    for step in range(STEPS):
        parts = [empty_rank_data(step, rank) for rank in range(WORLD)]
        x, target = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
        ((mlp(x) - target) ** 2).sum().backward()
        out["grads"].append([p.grad.clone() for p in mlp.parameters()])
        mlp.zero_grad(set_to_none=True)
    out["histories"] = histories(mlp)
    return _on_cpu(out)


def checkpoint_resume(directory: str) -> dict:
    """FSDP2, delayed scaling: two steps, a torch.distributed.checkpoint save, a third step; then
    a fresh model loaded from the checkpoint runs the third step again."""
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict
    from torch.distributed.fsdp import fully_shard
    rank = dist.get_rank()

    def sharded():
        mlp = model("delayed")
        ft.convert(mlp, recipe("delayed"), amax_reduction_group=dist.group.WORLD)
        for layer in (mlp[0], mlp[2]):
            fully_shard(layer, mesh=world_mesh())
        return fully_shard(mlp, mesh=world_mesh())

    def step(mlp, index):
        x, target = batch(index, rank)
        loss = ((mlp(x) - target) ** 2).mean()
        loss.backward()
        grads = [full(p.grad).clone() for p in mlp.parameters()]
        mlp.zero_grad(set_to_none=True)
        return grads

    first = sharded()
    step(first, 0)
    step(first, 1)
    dcp.save(get_model_state_dict(first), checkpoint_id=directory)
    continued = step(first, 2)
    resumed_model = sharded()
    state = get_model_state_dict(resumed_model)
    dcp.load(state, checkpoint_id=directory)
    set_model_state_dict(resumed_model, state)
    resumed = step(resumed_model, 2)
    return {"continued": continued, "resumed": resumed,
            "histories": (histories(first), histories(resumed_model))}


def _all_gather_spy(sent: list) -> None:
    """Records (dtype, bytes) of this rank's input to every all-gather FSDP2 makes (torch 2.15
    calls all_gather_single, earlier versions all_gather_into_tensor)."""
    import torch.distributed as dist
    for name in ("all_gather_single", "all_gather_into_tensor"):
        original = getattr(dist, name, None)
        if original is not None and not hasattr(original, "spied"):
            def spy(output, input, *args, _original=original, **kwargs):
                sent.append((input.dtype, input.numel() * input.element_size()))
                return _original(output, input, *args, **kwargs)
            spy.spied = True
            setattr(dist, name, spy)


ALL_GATHERS: list = []  # what _all_gather_spy records


def _amax_reduction_spy(calls: list) -> None:
    """Counts fp8dot's amax reductions (functional all-reduces) on this rank."""
    from torch.distributed import _functional_collectives as collectives
    original = collectives.all_reduce
    if not hasattr(original, "spied"):
        def spy(*args, **kwargs):
            calls.append(1)
            return original(*args, **kwargs)
        spy.spied = True
        collectives.all_reduce = spy


AMAX_REDUCTIONS: list = []  # what _amax_reduction_spy records


UNEVEN_HIDDEN = 129  # 65 and 64 rows a rank: FSDP2 pads the second shard


PRECOMPUTE_STEP = 1  # the step before which precompute_fp8_all_gather_scales runs


def fp8_all_gather(gathered_in_fp8: bool, param_dtype=None, compiled: bool = False,
                   uneven: bool = False, recipe_name: str = "tensorwise",
                   precompute: bool = False) -> dict:
    """FSDP2, the seed recipe (tensorwise, or with recipe_name "delayed" delayed scaling), 3
    AdamW steps that change the weights (so every gather casts with a new scale); with or
    without fp8dot.torch.fp8_all_gather, with or without a MixedPrecisionPolicy's param_dtype,
    eager or under torch.compile (as examples/train runs it); `uneven`: Linear(256 -> 129) and
    Linear(129 -> 1), whose shards FSDP2 pads (the second's second rank holds no row). The
    losses, the final weights and amax histories, and every all-gather's (dtype, bytes); for
    the tensorwise FP8 run in float32 also a checkpoint of the final weights loaded into a
    fresh model gathered in FP8 and into one without. `precompute`: the weights' amaxes are
    reduced by fp8dot.torch.precompute_fp8_all_gather_scales before PRECOMPUTE_STEP, after the
    previous step's optimizer step (the step after it finds them written since)."""
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    rank = dist.get_rank()
    _all_gather_spy(ALL_GATHERS)
    _amax_reduction_spy(AMAX_REDUCTIONS)

    def sharded(fp8: bool):
        if uneven:
            torch.manual_seed(0)
            mlp = nn.Sequential(nn.Linear(FEATURES, UNEVEN_HIDDEN), nn.GELU(),
                                nn.Linear(UNEVEN_HIDDEN, 1)).to(device())
        else:
            mlp = model(recipe_name)
        ft.convert(mlp, recipe(recipe_name), amax_reduction_group=dist.group.WORLD)
        if fp8:
            ft.fp8_all_gather(mlp)
        policy = MixedPrecisionPolicy(param_dtype=param_dtype)
        for layer in (mlp[0], mlp[2]):
            fully_shard(layer, mesh=world_mesh(), mp_policy=policy)
        return fully_shard(mlp, mesh=world_mesh(), mp_policy=policy)

    mlp = sharded(gathered_in_fp8)
    optimizer = torch.optim.AdamW(mlp.parameters(), lr=1e-2)
    forward = torch.compile(mlp) if compiled else mlp
    ALL_GATHERS.clear()
    AMAX_REDUCTIONS.clear()
    losses = []
    saved: list = []  # the tensors autograd saved in the first step's forward
    for step in range(STEPS):
        if precompute and step == PRECOMPUTE_STEP:
            ft.precompute_fp8_all_gather_scales(mlp)
        x, target = batch(step, rank)
        # The pack hook hands autograd back the tensor it was given. (Keying the tensors by
        # their storage's address and handing back the first one stored under it, as this
        # once did, gave the backward a wrong tensor where the allocator reused the address of
        # a gathered weight FSDP2 had freed: a segmentation fault in about half the runs.)
        hooks = (torch.autograd.graph.saved_tensors_hooks(
            lambda t: saved.append(t) or t, lambda t: t)
            if step == 0 and not compiled else contextlib.nullcontext())
        with hooks:
            loss = ((forward(x).float() - target[:, :1 if uneven else None]) ** 2).mean()
        if step == 0:
            # What the forward keeps for the backward, in memory between the two: each storage
            # once (FSDP2 frees the gathered weights after the forward, so tensors that alias
            # them hold none; a freed storage has size 0).
            storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                        for t in saved}
            held = sum(storages.values())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(_mean_over_ranks(loss))
    out = {"loss": losses, "weights": [full(p.detach()).clone() for p in mlp.parameters()],
           "all_gathers": list(ALL_GATHERS), "amax_reductions": len(AMAX_REDUCTIONS),
           "local_type": type(mlp[0].weight.to_local()).__name__, "explain": ft.explain(mlp),
           "saved_bytes_held": held, "histories": histories(mlp)}
    if (gathered_in_fp8 and param_dtype is None and not compiled and not uneven
            and recipe_name == "tensorwise"):
        directory = os.path.join(os.environ["FP8DOT_RUNS_OUT"], "fp8-all-gather-checkpoint")
        dcp.save(get_model_state_dict(mlp), checkpoint_id=directory)
        for fp8 in (True, False):
            fresh = sharded(fp8)
            state = get_model_state_dict(fresh)
            dcp.load(state, checkpoint_id=directory)
            set_model_state_dict(fresh, state)
            out[f"loaded, fp8 {fp8}"] = [full(p.detach()).clone() for p in fresh.parameters()]
    return out


def precompute_refusals() -> dict:
    """What precompute_fp8_all_gather_scales says of a model with no weight gathered in FP8, of
    one whose FP8-gathered weights are not sharded yet, and of one FSDP2 has not run yet."""
    from torch.distributed.fsdp import fully_shard

    def sharded_not_run(mlp):
        ft.fp8_all_gather(mlp)
        for layer in (mlp[0], mlp[2]):
            fully_shard(layer, mesh=world_mesh())
        return fully_shard(mlp, mesh=world_mesh())

    messages = {}
    for name, prepare in (("none", lambda mlp: mlp), ("not sharded", ft.fp8_all_gather),
                          ("not run", sharded_not_run)):
        try:
            ft.precompute_fp8_all_gather_scales(prepare(model("tensorwise")))
            messages[name] = ""
        except ValueError as error:
            messages[name] = str(error)
    return messages


def cached_weights_refusal() -> str:
    """The message cached_weights gives for an FSDP2 model (whose re-gathered weights it could
    not tell from the last step's)."""
    from torch.distributed.fsdp import fully_shard
    mlp = model("tensorwise")
    fully_shard(mlp, mesh=world_mesh())
    try:
        with ft.cached_weights(mlp):
            return "not refused"
    except ValueError as error:
        return str(error)


def compiled_against_eager() -> dict:
    """One layer with the amax reduction, eager and under torch.compile(fullgraph=True) (the
    reductions are functional collectives, which compile into the graph): outputs and weight
    gradients."""
    import torch.distributed as dist
    rank = dist.get_rank()
    torch.manual_seed(0)
    layer = ft.Linear(FEATURES, FEATURES, recipe=recipe("tensorwise"),
                      amax_reduction_group=dist.group.WORLD, device=device())
    x = batch(0, rank)[0]
    out = {}
    for name, run in (("eager", layer), ("compiled", torch.compile(layer, fullgraph=True))):
        output = run(x)
        output.sum().backward()
        out[name] = (output.detach().clone(), layer.weight.grad.clone())
        layer.zero_grad(set_to_none=True)
    return out


def _on_cpu(value):
    """Results with every tensor on the CPU (a DTensor as its local tensor)."""
    if isinstance(value, torch.Tensor):
        value = value.to_local() if hasattr(value, "to_local") else value
        return value.cpu()
    if isinstance(value, dict):
        return {k: _on_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_on_cpu(v) for v in value)
    return value


def main(out_dir: str) -> None:
    import torch.distributed as dist
    if DEVICE == "cuda":
        torch.cuda.set_device(device())
    # A collective that waits longer than this fails the run with its name, well before the
    # test's 900 s limit (the default waits 30 minutes).
    dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo",
                            timeout=datetime.timedelta(seconds=300))
    results = {}
    for recipe_name in DATA_PARALLEL_RECIPES:
        for wrapper in ("ddp", "fsdp2"):
            results[(wrapper, recipe_name)] = data_parallel(wrapper, recipe_name)
    for recipe_name in TENSOR_PARALLEL_RECIPES:
        results[("tp", recipe_name)] = tensor_parallel(recipe_name)
    results[("tp forward", "tensorwise")] = tensor_parallel_forward("tensorwise")
    # dgrad's Wᵀ cast again in the backward: the gathered weight under FSDP2, the shard (its
    # tensorwise amax reduced again over the shards) under tensor parallelism.
    for recipe_name in DATA_PARALLEL_RECIPES:
        results[("fsdp2", recipe_name, "recompute")] = data_parallel(
            "fsdp2", recipe_name, recompute_weight_transpose=True)
    results[("tp", "tensorwise promoted", "recompute")] = tensor_parallel(
        "tensorwise promoted", recompute_weight_transpose=True)
    results[("ddp", "tensorwise", "no reduction")] = data_parallel("ddp", "tensorwise",
                                                                   reduce_amax=False)
    results[("empty rank", "delayed")] = empty_rank("delayed")
    results["refusals"] = {"rowwise": tensor_parallel_refusal("rowwise", HIDDEN),
                           "blocks 384": tensor_parallel_refusal("blocks", 384),
                           "blocks 512": tensor_parallel_refusal("blocks", HIDDEN)}
    results["checkpoint"] = checkpoint_resume(os.path.join(out_dir, "checkpoint"))
    results["compiled"] = compiled_against_eager()
    results["cached_weights refusal"] = cached_weights_refusal()
    os.environ["FP8DOT_RUNS_OUT"] = out_dir
    for param_dtype in (None, torch.bfloat16):
        for fp8 in (False, True):
            results[("fp8 all-gather", fp8, param_dtype)] = fp8_all_gather(fp8, param_dtype)
    results[("fp8 all-gather", True, "compiled")] = fp8_all_gather(True, compiled=True)
    results[("fp8 all-gather", True, None, "precompute")] = fp8_all_gather(True, precompute=True)
    results[("fp8 all-gather", True, torch.bfloat16, "precompute")] = fp8_all_gather(
        True, torch.bfloat16, precompute=True)
    results[("fp8 all-gather", True, "uneven", "precompute")] = fp8_all_gather(
        True, uneven=True, precompute=True)
    results[("fp8 all-gather", True, "delayed", "precompute")] = fp8_all_gather(
        True, recipe_name="delayed", precompute=True)
    results["precompute refusals"] = precompute_refusals()
    for fp8 in (False, True):
        results[("fp8 all-gather", fp8, "uneven")] = fp8_all_gather(fp8, uneven=True)
        results[("fp8 all-gather", fp8, "delayed")] = fp8_all_gather(fp8, recipe_name="delayed")
    if dist.get_rank() == 0:
        torch.save(_on_cpu(results), os.path.join(out_dir, "results.pt"))
    # gloo's barrier waits for every collective still queued: one left to finish in a gloo
    # thread while Python shuts down aborted a run ("terminate called without an active
    # exception", in the thread's destructor of an all-gather).
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
    # Without Python's finalisation, which a gloo thread still releasing a tensor can meet even
    # after the barrier (examples/train/data_parallel.py's end_rank_process says how).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
