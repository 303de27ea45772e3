"""Host cost of FP8 calls at small M, eager: fp8dot's torch ops vs torch's own path.

Two numbers per call, medians over rounds: "host", the time to enqueue a burst of calls on an
idle GPU (the host's work alone, the GPU never makes the host wait), and "loop", the time per
call of a long back-to-back loop (the larger of host and GPU time per call).

1. One GEMM: torch.ops.fp8dot.scaled_mm (.default, as fp8dot.torch.Linear calls it, and through
   the OpOverloadPacket), fp8dot.scaled_dot (the framework-neutral Python API) and
   torch._scaled_mm.
2. One quantisation of an activation [M, K] to e4m3 with a tensor scale: fp8dot's fused op vs
   the torch ops a hand-written FP8 linear uses (amax, scale, cast).
3. One FP8 linear layer forward (inference, bf16 activations): fp8dot.torch.Linear (seed
   recipe, tensorwise), the same FP8 linear on torch's own path (the torch ops of 2. and
   torch._scaled_mm), torchao's Float8Linear (when installed) and bf16 nn.Linear; then with
   the FP8 weight made once (fp8dot.torch.cached_weights, a pre-quantised weight for torch's
   path), as in inference or gradient accumulation.
"""

import contextlib
import statistics
import time

import torch

import fp8dot
import fp8dot.torch as ft
from fp8dot.torch import ops

E4M3 = torch.float8_e4m3fn


def median_us_per_call(fn, calls, rounds, wait_for_gpu):
    """Median over rounds of the time per call of `calls` calls started on an idle GPU; with
    wait_for_gpu the round ends when the GPU has finished them, else when the host has enqueued
    them."""
    samples = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if wait_for_gpu:
            torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    torch.cuda.synchronize()
    return statistics.median(samples)


def per_call_us(fn):
    """(host, loop) µs per call, after a warm-up."""
    for _ in range(20):
        fn()
    # Host: bursts short enough that the launch queue (about a thousand launches) never fills
    # and makes the host wait. Loop: long enough for the GPU's time to show where it is longer.
    return (median_us_per_call(fn, 40, 25, wait_for_gpu=False),
            median_us_per_call(fn, 200, 7, wait_for_gpu=True))


def header(label, names):
    print(f"{label:>18} " + " ".join(f"{name + ' host/loop':>24}" for name in names))


def row(label, fns):
    cells = [per_call_us(fn) for fn in fns]
    print(f"{label:>18} " + " ".join(f"{host:>15.1f} /{loop:>6.1f}" for host, loop in cells))


def gemm_calls(m, n, k):
    a = torch.randn(m, k, device="cuda").to(E4M3)
    b = torch.randn(n, k, device="cuda").to(E4M3).t()
    one = torch.ones((), device="cuda")
    args = (a, b, one, one, None, None, torch.bfloat16, "default", "default", False, "auto")
    return {
        "op .default": lambda: torch.ops.fp8dot.scaled_mm.default(*args),
        "op packet": lambda: torch.ops.fp8dot.scaled_mm(*args),
        "scaled_dot": lambda: fp8dot.scaled_dot(a, b, lhs_scale=one, rhs_scale=one,
                                                out_dtype=torch.bfloat16),
        "_scaled_mm": lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16,
                                               use_fast_accum=True),
    }


def torch_quantize(x):
    scale = x.abs().amax().float() / torch.finfo(E4M3).max
    return (x.float() / scale).to(E4M3), scale


def quantize_calls(m, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    return {"fp8dot op": lambda: ft.quantize(x, E4M3, "tensor"),
            "torch ops": lambda: torch_quantize(x)}


def torch_fp8_linear(x, weight_q, weight_scale):
    """An FP8 linear on torch's own path: x quantised with torch ops, torch._scaled_mm with
    fast accumulation (the forward's precision DEFAULT)."""
    x_q, x_scale = torch_quantize(x)
    return torch._scaled_mm(x_q, weight_q.t(), x_scale, weight_scale, out_dtype=x.dtype,
                            use_fast_accum=True)


def linear_calls(m, n, k, contexts: contextlib.ExitStack):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    bf16 = torch.nn.Linear(k, n, bias=False, device="cuda", dtype=torch.bfloat16)
    master = torch.nn.Linear(k, n, bias=False, device="cuda")
    fp8 = ft.Linear.from_linear(master, ft.Recipe.seed())
    weight_q, weight_scale = torch_quantize(master.weight)
    contexts.enter_context(ft.cached_weights(fp8))  # open until main's ExitStack closes
    fp8_uncached = ft.Linear.from_linear(master, ft.Recipe.seed())
    calls = {"fp8dot": lambda: fp8_uncached(x),
             "torch path": lambda: torch_fp8_linear(x, *torch_quantize(master.weight)),
             "fp8dot cached": lambda: fp8(x),
             "torch cached": lambda: torch_fp8_linear(x, weight_q, weight_scale)}
    try:
        from torchao.float8 import convert_to_float8_training

        peer = convert_to_float8_training(torch.nn.Sequential(
            torch.nn.Linear(k, n, bias=False, device="cuda")))
        calls["torchao"] = lambda: peer(x)
    except ImportError:
        pass
    calls["bf16 nn.Linear"] = lambda: bf16(x)
    return calls


@torch.no_grad()
def main():
    print(f"torch {torch.__version__}; fp8dot's torch ops in C++: {ops.NATIVE}")
    shapes = [(16, 4096, 4096), (64, 4096, 4096), (128, 7168, 2048)]
    print("\n1. one GEMM, us per call")
    for m, n, k in shapes:
        calls = gemm_calls(m, n, k)
        if m == shapes[0][0]:
            header("M x N x K", list(calls))
        row(f"{m}x{n}x{k}", list(calls.values()))
    print("\n2. quantise an activation (tensor scale), us per call")
    for m, _, k in shapes:
        calls = quantize_calls(m, k)
        if m == shapes[0][0]:
            header("M x K", list(calls))
        row(f"{m}x{k}", list(calls.values()))
    print("\n3. FP8 linear forward (bf16 in and out), us per call")
    for m, n, k in shapes:
        with contextlib.ExitStack() as contexts:
            calls = linear_calls(m, n, k, contexts)
            if m == shapes[0][0]:
                header("M x N x K", list(calls))
            row(f"{m}x{n}x{k}", list(calls.values()))


if __name__ == "__main__":
    main()
