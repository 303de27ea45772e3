"""fp8dot's fused quantisation kernel against the same quantisation written in torch and compiled
by inductor (what fp8dot.torch used before, and what torchao does), on the MLP block's tensors.

Each variant produces q and q_t (the transposed FP8 copy a backward GEMM needs) with the scales
of the granularity. Timing: CUDA events over `steps` back-to-back calls after warm-up, median of
rounds; GB/s counts the bytes a single pass must move (read x once, write q and q_t).

    python bench/python/quantize_bench.py
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch

import fp8dot.torch as ft

E4M3 = torch.float8_e4m3fn
SUITES = {
    # The MLP block's tensors (bench/python/mlp_block_bench.py).
    "mlp": [("activation X", 8192, 4096, torch.bfloat16), ("hidden H", 8192, 16384, torch.bfloat16),
            ("weight W1", 16384, 4096, torch.float32)],
    # The 300M training model's (examples/train, h200-300m: 16384 tokens, d 2048, SwiGLU 5504):
    # an RMSNorm output (f32 under autocast), an attention output, the SwiGLU hidden, the qkv
    # gradient, two fp32 master weights. Most are under or near L2's 50 MB.
    "model": [("norm out X", 16384, 2048, torch.float32), ("attn out", 16384, 2048, torch.bfloat16),
              ("hidden H", 16384, 5504, torch.bfloat16), ("dY qkv", 16384, 6144, torch.bfloat16),
              ("weight up", 5504, 2048, torch.float32), ("weight out", 2048, 2048, torch.float32)],
}


def torch_reference(x: torch.Tensor, granularity: str):
    """The quantisation in plain torch, for inductor (tensor and 1x128 / 128x128 scales)."""
    x = x.float()
    rows, cols = x.shape
    if granularity == "tensor":
        scale = torch.clamp(x.abs().amax(), min=1e-12) / 448.0
        q = (x / scale).clamp(-448, 448).to(E4M3)
        return q, q.t().contiguous(), scale
    if granularity == "row":  # q_t with one scale per column of x
        scale = torch.clamp(x.abs().amax(dim=1, keepdim=True), min=1e-12) / 448.0
        scale_t = torch.clamp(x.abs().amax(dim=0, keepdim=True), min=1e-12) / 448.0
        q = (x / scale).clamp(-448, 448).to(E4M3)
        q_t = (x / scale_t).clamp(-448, 448).to(E4M3).t().contiguous()
        return q, q_t, scale, scale_t
    block_rows = 1 if granularity == "1x128" else 128
    blocks = x.reshape(rows // block_rows, block_rows, cols // 128, 128)
    scale = torch.clamp(blocks.abs().amax(dim=(1, 3), keepdim=True), min=1e-12) / 448.0
    q = (blocks / scale).clamp(-448, 448).to(E4M3).reshape(rows, cols)
    if granularity == "128x128":
        return q, q.t().contiguous(), scale
    # 1x128 transposed: its own scales along the other dim
    xt = x.t().reshape(cols, rows // 128, 128)
    scale_t = torch.clamp(xt.abs().amax(dim=2, keepdim=True), min=1e-12) / 448.0
    q_t = (xt / scale_t).clamp(-448, 448).to(E4M3).reshape(cols, rows)
    return q, q_t, scale, scale_t


def fp8dot_variant(x: torch.Tensor, granularity: str):
    return ft.quantize(x, E4M3, granularity, transposed=True)


def time_ms(fn, x, steps: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        fn(x)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--suite", choices=sorted(SUITES), default="mlp")
    parser.add_argument("--granularities", default="tensor,row,1x128,128x128")
    args = parser.parse_args()
    compiled = torch.compile(torch_reference, dynamic=False)
    rows_out = []
    for name, rows, cols, dtype in SUITES[args.suite]:
        x = torch.randn(rows, cols, device="cuda", dtype=dtype)
        for granularity in args.granularities.split(","):
            variants = {"fp8dot": lambda t, g=granularity: fp8dot_variant(t, g),
                        "inductor": lambda t, g=granularity: compiled(t, g),
                        "fp8dot_q_only": lambda t, g=granularity: ft.quantize(t, E4M3, g),
                        "copy": lambda t: t.clone()}
            if granularity == "tensor":
                # Delayed scaling's call: the scale is given, so no amax pass runs first; the
                # cast still takes max |x| for the history. The difference to "fp8dot" is the
                # amax pass and its scale.
                given = (x.abs().amax().float() / 448.0).reshape(())
                variants["fp8dot_given"] = lambda t, s=given: ft.quantize(
                    t, E4M3, "tensor", transposed=True, scale=s, amax=True)
            for fn in variants.values():
                fn(x)
                fn(x)
            times = {v: [] for v in variants}
            for _ in range(args.rounds):
                for v, fn in variants.items():
                    times[v].append(time_ms(fn, x, args.steps))
            moved = x.numel() * (x.element_size() + 2)  # read x, write q and q_t
            row = {"tensor": name, "shape": [rows, cols], "dtype": str(dtype).removeprefix("torch."),
                   "granularity": granularity}
            bytes_moved = {"fp8dot": moved, "inductor": moved, "fp8dot_given": moved,
                           "fp8dot_q_only": x.numel() * (x.element_size() + 1),
                           "copy": 2 * x.numel() * x.element_size()}
            for v in variants:
                ms = statistics.median(times[v])
                row[f"{v}_ms"] = round(ms, 4)
                row[f"{v}_GBps"] = round(bytes_moved[v] / ms / 1e6, 1)
            row["speedup"] = round(row["inductor_ms"] / row["fp8dot_ms"], 2)
            rows_out.append(row)
            print(json.dumps(row))
    print("\nGB/s count x read once and q, q_t written (q only: x and q; copy: x read and written)")
    print(f"{'tensor':14} {'granularity':9} {'fp8dot ms':>9} {'GB/s':>7} {'inductor ms':>11} "
          f"{'GB/s':>7} {'speed-up':>8} {'q only ms':>9} {'copy GB/s':>9}")
    for r in rows_out:
        print(f"{r['tensor']:14} {r['granularity']:9} {r['fp8dot_ms']:9.3f} {r['fp8dot_GBps']:7.0f} "
              f"{r['inductor_ms']:11.3f} {r['inductor_GBps']:7.0f} {r['speedup']:8.2f} "
              f"{r['fp8dot_q_only_ms']:9.3f} {r['copy_GBps']:9.0f}")
    given = [r for r in rows_out if "fp8dot_given_ms" in r]
    if given:
        print(f"\n{'tensor':14} {'given-scale ms':>14} {'GB/s':>7} (delayed scaling: no amax pass)")
        for r in given:
            print(f"{r['tensor']:14} {r['fp8dot_given_ms']:14.3f} {r['fp8dot_given_GBps']:7.0f}")


if __name__ == "__main__":
    main()
