"""What a training run prints and logs, the same for train.py (torch) and train_flax.py (JAX):
one progress line per step and per evaluation on stdout, and with --log one JSON object a line
whose `type` is run, train, eval or summary (README.md lists the fields; plot.py reads them).
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

# Steps whose time is left out of the summary's tokens/s: the first steps compile (torch.compile,
# jax.jit), autotune and warm the allocator.
TIMING_WARMUP_STEPS = 10


class RunLog:
    """The per-step JSON lines (--log) and the progress lines on stdout, and the training losses
    and step times the summary is made of."""

    def __init__(self, path: Path | None, steps: int, tokens_per_step: int):
        self.steps, self.tokens_per_step = steps, tokens_per_step
        self.train_losses: list[float] = []
        self.step_seconds: list[float] = []
        self.diverged_at: int | None = None
        self.file = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.file = path.open("w")

    def record(self, **fields) -> None:
        if self.file is not None:
            self.file.write(json.dumps(fields) + "\n")
            self.file.flush()

    def train_step(self, step: int, loss: float, lr: float, grad_norm: float,
                   seconds: float) -> bool:
        """Prints and logs one step; False when its loss is not finite (the run stops there)."""
        tokens_per_s = self.tokens_per_step / seconds
        print(f"train step {step:>5}/{self.steps} | loss {loss:.4f} | lr {lr:.2e} | "
              f"{tokens_per_s:>11,.0f} tok/s | {1000 * seconds:8.1f} ms")
        self.record(type="train", step=step, loss=loss, lr=lr, grad_norm=grad_norm,
                    tokens_per_s=tokens_per_s, ms=1000 * seconds)
        self.train_losses.append(loss)
        self.step_seconds.append(seconds)
        if not math.isfinite(loss):
            self.diverged_at = step
            print(f"the loss is {loss} at step {step}: stopping")
            return False
        return True

    def evaluation(self, step: int, val_loss: float) -> None:
        print(f"eval  step {step:>5}/{self.steps} | val_loss {val_loss:.4f}")
        self.record(type="eval", step=step, val_loss=val_loss, tokens=step * self.tokens_per_step)

    def finish(self, summary: dict, peak_memory_source: str) -> dict:
        """Logs the summary, closes the log and prints the peak memory (read from
        `peak_memory_source`, e.g. "torch.cuda.max_memory_allocated") and the summary."""
        self.record(**summary)
        if self.file is not None:
            self.file.close()
        peak = summary["peak_memory_bytes"]
        print("peak memory: " + (f"{peak / 2**30:.2f} GiB ({peak_memory_source})" if peak
                                 else "n/a (no memory statistics on this device)"))
        print(json.dumps(summary))
        return summary

    def summary(self, *, label: str, linear: str, recipe: str | None, val_loss: float,
                train_seconds: float, counts: dict[str, int],
                peak_memory_bytes: int | None) -> dict:
        """The last line of the log: losses, the median step time after the timing warm-up."""
        timed = self.step_seconds[TIMING_WARMUP_STEPS:] or self.step_seconds
        losses = self.train_losses
        tail = losses[-max(1, len(losses) // 10):]
        return dict(
            type="summary", label=label, linear=linear, recipe=recipe, steps=len(losses),
            diverged_at=self.diverged_at, first_train_loss=losses[0],
            final_train_loss=losses[-1], final_train_loss_mean_last_10pct=statistics.fmean(tail),
            final_val_loss=val_loss if self.diverged_at is None else None,
            tokens_per_s=self.tokens_per_step / statistics.median(timed),
            ms_per_step=1000 * statistics.median(timed), peak_memory_bytes=peak_memory_bytes,
            train_seconds=train_seconds, parameters_total=counts["total"],
            parameters_block_projections=counts["block_projections"],
        )
