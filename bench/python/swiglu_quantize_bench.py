"""The SwiGLU product quantised inside fp8dot's cast (quantize(gate, up=up): the product is never
written) against what the layer does without it: inductor's SiLU·up kernel writes the bf16
product, then fp8dot's kernel quantises it (q and q_t, as a down projection's forward and wgrad
need). Shapes: the 300M training model's hidden (16384 tokens x 5504) and the MLP block's (8192 x
16384). Scalings: tensorwise current (an amax pass first), delayed (a given scale, the amax from
the cast's own pass), 1x128 blocks.

Timing: CUDA events over `steps` back-to-back calls after warm-up, median of rounds. GB/s
counts what one pass must move: gate and up read once, q and q_t written.

    python bench/python/swiglu_quantize_bench.py [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch
import torch.nn.functional as F

import fp8dot.torch as ft

E4M3 = torch.float8_e4m3fn
SHAPES = [("model hidden", 16384, 5504), ("block hidden", 8192, 16384)]
SCALINGS = {"tensorwise": ("tensor", False), "delayed": ("tensor", True), "1x128": ("1x128", False)}


def time_ms(fn, steps: int, rounds: int) -> float:
    for _ in range(3):
        fn()
    medians = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            fn()
        end.record()
        torch.cuda.synchronize()
        medians.append(start.elapsed_time(end) / steps)
    return statistics.median(medians)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    product = torch.compile(lambda gate, up: F.silu(gate) * up)
    rows = []
    print(f"{'tensor':14s} {'scaling':10s} {'unfused us':>10s} {'fused us':>9s} {'speed-up':>8s} "
          f"{'fused GB/s':>10s} {'same bytes':>10s}")
    for name, tokens, hidden in SHAPES:
        generator = torch.Generator(device="cuda").manual_seed(tokens + hidden)
        gate = torch.randn(tokens, hidden, device="cuda", generator=generator).bfloat16()
        up = torch.randn(tokens, hidden, device="cuda", generator=generator).bfloat16()
        for scaling, (granularity, delayed) in SCALINGS.items():
            scale = torch.tensor([0.02], device="cuda") if delayed else None
            options = dict(transposed=True, scale=scale, amax=delayed,
                           scale_layout="column-major" if granularity == "1x128" else "row-major")
            unfused = lambda: ft.quantize(product(gate, up), E4M3, granularity, **options)
            fused = lambda: ft.quantize(gate, E4M3, granularity, up=up, **options)
            same = torch.equal(unfused().q.view(torch.uint8), fused().q.view(torch.uint8))
            unfused_ms = time_ms(unfused, args.steps, args.rounds)
            fused_ms = time_ms(fused, args.steps, args.rounds)
            moved = tokens * hidden * (2 + 2 + 1 + 1)
            row = dict(tensor=name, tokens=tokens, hidden=hidden, scaling=scaling,
                       unfused_us=unfused_ms * 1e3, fused_us=fused_ms * 1e3,
                       speedup=unfused_ms / fused_ms, fused_gbps=moved / fused_ms / 1e6,
                       same_bytes=same)
            rows.append(row)
            print(f"{name:14s} {scaling:10s} {row['unfused_us']:10.1f} {row['fused_us']:9.1f} "
                  f"{row['speedup']:7.3f}x {row['fused_gbps']:10.0f} {str(same):>10s}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
