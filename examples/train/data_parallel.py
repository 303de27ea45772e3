"""train.py --fsdp: data parallelism over the processes torchrun starts, with FSDP2.

    torchrun --standalone --nproc-per-node 2 examples/train/train.py --config h200-300m \\
        --compile --linear fp8dot --recipe seed --fsdp

Every rank draws the same global batch (the same generator, the same bytes as one process) and
trains on its rows of it, so a run on P processes sees exactly the batches of a run on one.
Each block and then the whole model is sharded with fully_shard; FSDP2 averages the gradients,
which is the gradient of the global batch's mean loss. fp8dot's layers reduce their tensorwise
and delayed amaxes over the ranks (unless --no-amax-reduction), so they cast with the global
batch's scales (docs/distributed.md); with --fp8-all-gather FSDP2 gathers their weights in FP8
(fp8dot.torch.fp8_all_gather). Only rank 0 prints and writes the log.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

import torch
import torch.distributed as dist
from torch import nn


class DataParallel:
    """The process group of a torchrun launch, and what a training step needs from it."""

    def __init__(self, device_type: str):
        if "RANK" not in os.environ:
            raise SystemExit("--fsdp runs under torchrun (torch.distributed.run), which sets RANK, "
                             "WORLD_SIZE and LOCAL_RANK")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.device = (torch.device("cuda", self.local_rank) if device_type == "cuda"
                       else torch.device("cpu"))
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self._quiet = None
        self._model_gathered_in_fp8 = None
        if self.rank != 0:  # one rank reports
            self._quiet = contextlib.redirect_stdout(io.StringIO())
            self._quiet.__enter__()

    def check_batch(self, batch_size: int) -> None:
        if batch_size % self.world:
            raise SystemExit(f"--batch-size {batch_size} does not split over {self.world} "
                             "processes")

    def shard(self, model: nn.Module, amax_reduction: bool, fp8_all_gather: bool = False) -> None:
        """fp8dot's layers reduce their amaxes over the ranks (and with fp8_all_gather have
        their weights gathered in FP8); FSDP2 shards every block, then the rest (embeddings,
        final norm, LM head)."""
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        import fp8dot.torch as ft
        for module in model.modules():
            if isinstance(module, ft.Linear):
                module.amax_reduction_group = dist.group.WORLD if amax_reduction else None
        if fp8_all_gather:
            ft.fp8_all_gather(model)
        # The mesh on the model's device type: without one FSDP2 takes the machine's
        # accelerator, and a CPU run on a machine with fewer GPUs than ranks would fail.
        mesh = init_device_mesh(next(model.parameters()).device.type, (self.world,))
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        fully_shard(model, mesh=mesh)
        self._model_gathered_in_fp8 = model if fp8_all_gather else None

    def after_optimizer_step(self) -> None:
        """With fp8_all_gather: the weights' amaxes for the next step's gathers, all in one
        all-reduce (fp8dot.torch.precompute_fp8_all_gather_scales) rather than one a gather."""
        if self._model_gathered_in_fp8 is not None:
            import fp8dot.torch as ft
            ft.precompute_fp8_all_gather_scales(self._model_gathered_in_fp8)

    def rows(self, tensor: torch.Tensor) -> torch.Tensor:
        """This rank's rows of a global batch."""
        share = tensor.shape[0] // self.world
        return tensor[self.rank * share:(self.rank + 1) * share]

    def mean(self, value: torch.Tensor) -> torch.Tensor:
        """The mean over the ranks (each rank's value the mean over equally many rows)."""
        value = value.detach().clone()
        dist.all_reduce(value)
        return value / self.world

    def close(self) -> None:
        if self._quiet is not None:
            self._quiet.__exit__(None, None, None)
        # The barrier first: gloo's waits for every collective still queued (FSDP2's are
        # asynchronous), so none is left to finish in a gloo thread while Python shuts down,
        # which aborts the process.
        dist.barrier()
        dist.destroy_process_group()


def end_rank_process() -> None:
    """Ends a torchrun rank's process at once, its output flushed; returns in a plain process.

    After destroy_process_group gloo's worker threads live on (gloo has no shutdown), and one
    may still be releasing the last collective's tensors. Where such a tensor's Python object
    outlived Python's own reference, releasing it takes the GIL; once the interpreter has
    started to finalise, a thread that asks for the GIL is ended by pthread_exit, whose unwinding
    through the work's destructor calls std::terminate ("terminate called without an active
    exception", SIGABRT). The race is rare and wants a busy machine: CI's 2 cores met it
    twice, once with the barrier above in place; 18 runs on an idle machine did not. A rank has
    nothing left to finalise here (every collective is done, the log closed), so it skips
    finalisation."""
    if not dist.is_torchelastic_launched():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def full_value(tensor: torch.Tensor) -> torch.Tensor:
    """A DTensor's whole value (FSDP2's clipped gradient norm), a plain tensor as it is."""
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor
