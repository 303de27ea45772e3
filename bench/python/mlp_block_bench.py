"""The layer benchmark of issue #10: forward + backward of an MLP block (tokens × d → 4d → d,
GELU) in bf16 nn.Linear, fp8dot.torch.Linear (several recipes) and torchao's Float8Linear, all
under torch.compile, in one process, interleaved round by round.

Timing: CUDA events around `steps` fwd+bwd iterations after warm-up, median over rounds; the
optimizer is left out (it is the same for every variant). Each step starts with the gradients
set to None, as `optimizer.zero_grad()` leaves them, so a step writes them instead of adding to
them. The parameters and the input are `--param-dtype` (default bfloat16, the setup FACTS.md's
torchao and XLA numbers were measured in; float32 is master weights under bf16 autocast). Prints
one JSON line per variant and a table.

    python bench/python/mlp_block_bench.py --tokens 8192 --d-model 4096 --rounds 5

--gelu tanh gives every variant GELU's tanh form (GPT-2's, jax.nn.gelu's default) instead of
torch's default erf form, and allows fp8dot variants with a "+fused" suffix
(fp8dot-delayed+fused): the down projection takes GELU inside its FP8 cast
(fp8dot.torch.Linear.gelu), so GELU(up(x)) is never written in bf16.

A "+recompute" suffix on an fp8dot variant (fp8dot-seed+recompute) converts with
recompute_weight_transpose=True: what casting Wᵀ again in the backward costs a step. Each row
also gives the allocator's peak during the variant's steps above what was allocated before them
(every variant's gradients freed first).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time

import torch
from torch import nn


class MlpBlock(nn.Module):
    """up, GELU (torch's `approximate`), down; `fused`: down.gelu(up(x)) (fp8dot's layer, tanh)."""

    def __init__(self, d_model: int, hidden: int, approximate: str = "none"):
        super().__init__()
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)
        self.approximate = approximate
        self.fused = False

    def forward(self, x):
        if self.fused:
            return self.down.gelu(self.up(x))
        return self.down(torch.nn.functional.gelu(self.up(x), approximate=self.approximate))


def make_variants(reference: nn.Module, names: list[str], compile_mode: str = "default"
                  ) -> dict[str, nn.Module]:
    variants = {}
    for name in names:
        model = copy.deepcopy(reference)
        recompute = name.endswith("+recompute")
        recipe_name = name.removesuffix("+recompute")
        fused = recipe_name.endswith("+fused")
        recipe_name = recipe_name.removesuffix("+fused")
        if fused and (not name.startswith("fp8dot-") or reference.approximate != "tanh"):
            raise ValueError(f"{name}: +fused takes an fp8dot variant and --gelu tanh")
        if recompute and not name.startswith("fp8dot-"):
            raise ValueError(f"{name}: +recompute takes an fp8dot variant")
        if name.startswith("fp8dot-"):
            import fp8dot.torch as ft

            recipe = {"fp8dot-seed": ft.Recipe.seed(),
                      "fp8dot-fast": ft.Recipe.fast_everywhere(),
                      "fp8dot-promoted": ft.Recipe.promoted_everywhere(),
                      "fp8dot-delayed": ft.Recipe.seed(scaling="delayed"),
                      "fp8dot-fast-delayed": ft.Recipe.fast_everywhere(scaling="delayed"),
                      "fp8dot-rowwise": ft.Recipe.seed(scaling="rowwise"),
                      "fp8dot-blocks": ft.Recipe.deepseek_blocks()}[recipe_name]
            ft.convert(model, recipe, recompute_weight_transpose=recompute)
            model.fused = fused
        elif name == "torchao":
            from torchao.float8 import convert_to_float8_training

            convert_to_float8_training(model)
        elif name != "bf16":
            raise ValueError(f"unknown variant {name}")
        variants[name] = torch.compile(model, mode=compile_mode)
    return variants


def run_step(model, x, dy) -> None:
    x.grad = None
    for parameter in model.parameters():
        parameter.grad = None
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = model(x)
    y.backward(dy)


def time_steps(model, x, dy, steps: int) -> float:
    """ms per step on the GPU clock in steady state: one step is queued before the start event,
    so the GPU is busy when it reaches it and the host's launch latency of the first step is not
    counted."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    run_step(model, x, dy)
    start.record()
    for _ in range(steps):
        run_step(model, x, dy)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / steps


class ClockLog:
    """The GPU's SM clock and power while each variant runs: nvidia-smi samples them every 20 ms
    in the background, and each timed batch records its wall-clock span; a sample belongs to the
    batch whose span (less 30 ms at each end, where the GPU may still run the batch before it)
    holds it. The H200 is power-limited: a step that draws more power runs at a lower clock."""

    def __init__(self, path: str):
        import subprocess

        self.path = path
        self.spans = []  # (variant, start, end), time.time()
        self.process = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
             "--format=csv,noheader,nounits", "-lms", "20"],
            stdout=open(path, "w"), stderr=subprocess.DEVNULL)

    def record(self, variant: str, start: float, end: float) -> None:
        self.spans.append((variant, start, end))

    def summary(self) -> dict:
        import datetime

        self.process.terminate()
        self.process.wait()
        samples = {}
        for line in open(self.path):
            fields = [field.strip() for field in line.split(",")]
            try:
                when = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                clock, power = float(fields[1]), float(fields[2])
            except (ValueError, IndexError):
                continue
            for variant, start, end in self.spans:
                if start + 0.03 <= when <= end - 0.03:
                    samples.setdefault(variant, []).append((clock, power))
        return {variant: {"sm_clock_mhz": statistics.median(c for c, _ in values),
                          "power_w": statistics.median(p for _, p in values),
                          "samples": len(values)}
                for variant, values in samples.items()}


def profile_step(name: str, model, x, dy, top: int) -> None:
    """Where one fwd+bwd step's GPU time goes (fp8dot.torch.timeline): kernel time by kind and
    by kernel, the idle time between kernels and which kernels the GPU waited for."""
    from torch.profiler import ProfilerActivity, profile

    from fp8dot.torch.timeline import summarize

    steps = 3
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        time_steps(model, x, dy, steps)
    print(f"== profile: {name}")
    print(summarize(prof.events(), steps + 1, top=top))  # time_steps' untimed first step too


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--d-model", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=16384)
    parser.add_argument("--param-dtype", choices=("bfloat16", "float32"), default="bfloat16")
    parser.add_argument("--gelu", choices=("none", "tanh"), default="none",
                        help="GELU's form for every variant (torch's `approximate`); tanh allows "
                             "the fp8dot variants' +fused suffix")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--variants", default="bf16,fp8dot-seed,fp8dot-fast,fp8dot-promoted,fp8dot-rowwise,fp8dot-blocks,torchao")
    parser.add_argument("--compile-mode", default="default",
                        help="torch.compile's mode for every variant (reduce-overhead: CUDA graphs)")
    parser.add_argument("--profile", action="store_true",
                        help="after timing, print each variant's kernels per step (torch.profiler)")
    parser.add_argument("--clock-log", metavar="PATH",
                        help="sample the SM clock and power with nvidia-smi into PATH and print "
                             "each variant's median (use --steps 40 or more: 20 ms samples)")
    args = parser.parse_args()

    torch.manual_seed(0)
    param_dtype = getattr(torch, args.param_dtype)
    reference = MlpBlock(args.d_model, args.hidden, args.gelu).to("cuda", param_dtype)
    x = torch.randn(args.tokens, args.d_model, device="cuda", dtype=param_dtype,
                    requires_grad=True)
    dy = torch.randn(args.tokens, args.d_model, device="cuda", dtype=torch.bfloat16)
    names = args.variants.split(",")
    variants = {}
    for name in names:
        try:
            variants.update(make_variants(reference, [name], args.compile_mode))
        except Exception as error:  # a peer that does not install is reported, not fatal
            print(json.dumps({"variant": name, "error": f"{type(error).__name__}: {error}"}))
    for model in variants.values():  # compile and warm up
        time_steps(model, x, dy, 3)
    # What a variant's step holds at its peak above what was allocated before it: each variant's
    # steps alone, after every variant's gradients were freed (a step writes its own).
    step_peak_bytes = {}
    for name, model in variants.items():
        x.grad = None
        for other in variants.values():
            for parameter in other.parameters():
                parameter.grad = None
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        time_steps(model, x, dy, 2)
        step_peak_bytes[name] = torch.cuda.max_memory_allocated() - before
    times = {name: [] for name in variants}
    clocks = ClockLog(args.clock_log) if args.clock_log else None
    for _ in range(args.rounds):
        for name, model in variants.items():
            started = time.time()
            times[name].append(time_steps(model, x, dy, args.steps))
            if clocks:
                clocks.record(name, started, time.time())
    flops = 3 * 2 * 2 * args.tokens * args.d_model * args.hidden  # 2 layers, fwd + 2 bwd GEMMs
    baseline = statistics.median(times["bf16"]) if "bf16" in times else None
    rows = []
    for name, samples in times.items():
        ms = statistics.median(samples)
        row = {"variant": name, "ms": round(ms, 4), "min_ms": round(min(samples), 4),
               "max_ms": round(max(samples), 4), "tflops": round(flops / ms / 1e9, 1),
               "speedup_vs_bf16": None if baseline is None else round(baseline / ms, 3),
               "step_peak_mib": round(step_peak_bytes[name] / 2**20, 1)}
        if "torchao" in times:
            row["vs_torchao"] = round(statistics.median(times["torchao"]) / ms, 3)
        rows.append(row)
        print(json.dumps(row))
    print(f"\nMLP block fwd+bwd, {args.tokens} tokens x {args.d_model} -> {args.hidden} -> "
          f"{args.d_model}, GELU {args.gelu}, {args.param_dtype} parameters, torch.compile ({args.compile_mode}), median of {args.rounds} "
          f"rounds x {args.steps} steps")
    print(f"{'variant':28} {'ms':>8} {'TFLOP/s':>8} {'vs bf16':>8} {'vs torchao':>10} "
          f"{'step peak MiB':>13}")
    for row in rows:
        print(f"{row['variant']:28} {row['ms']:8.3f} {row['tflops']:8.1f} "
              f"{row['speedup_vs_bf16'] or 0:8.3f} {row.get('vs_torchao') or 0:10.3f} "
              f"{row['step_peak_mib']:13.1f}")
    if clocks:
        for name, clock in clocks.summary().items():
            print(json.dumps({"variant": name, **clock}))
    if args.profile:
        for name, model in variants.items():
            profile_step(name, model, x, dy, top=14)


if __name__ == "__main__":
    main()
