"""Host cost of FP8 calls at small M, eager: fp8dot's torch ops vs torch's own path.

At M ≤ 128 the GPU finishes a GEMM in a few microseconds, so the time per call of a loop of
calls is the host cost of launching it. Median over rounds of back-to-back calls.

1. One GEMM: torch.ops.fp8dot.scaled_mm (.default, as fp8dot.torch.Linear calls it, and through
   the OpOverloadPacket), fp8dot.scaled_dot (the framework-neutral Python API) and
   torch._scaled_mm.
2. One quantisation of an activation [M, K] to e4m3 with a tensor scale: fp8dot's fused op vs
   the torch ops a hand-written FP8 linear uses (amax, scale, cast).
3. One FP8 linear layer forward (inference, bf16 activations): fp8dot.torch.Linear (seed
   recipe, tensorwise), torchao's Float8Linear (when installed) and bf16 nn.Linear.
"""

import statistics
import time

import torch

import fp8dot
import fp8dot.torch as ft
from fp8dot.torch import ops

E4M3 = torch.float8_e4m3fn


def per_call_us(fn, calls=200, rounds=7):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def row(label, columns):
    print(f"{label:>18} " + " ".join(f"{value:>14.1f}" for value in columns))


def gemm_calls(m, n, k):
    a = torch.randn(m, k, device="cuda").to(E4M3)
    b = torch.randn(n, k, device="cuda").to(E4M3).t()
    one = torch.ones((), device="cuda")
    args = (a, b, one, one, None, None, torch.bfloat16, "default", "default", False, "auto")
    return [
        lambda: torch.ops.fp8dot.scaled_mm.default(*args),
        lambda: torch.ops.fp8dot.scaled_mm(*args),
        lambda: fp8dot.scaled_dot(a, b, lhs_scale=one, rhs_scale=one, out_dtype=torch.bfloat16),
        lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True),
    ]


def torch_quantize(x):
    scale = x.abs().amax().float() / torch.finfo(E4M3).max
    return (x.float() / scale).to(E4M3), scale


def quantize_calls(m, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    return [lambda: ft.quantize(x, E4M3, "tensor"), lambda: torch_quantize(x)]


def linear_calls(m, n, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    bf16 = torch.nn.Linear(k, n, bias=False, device="cuda", dtype=torch.bfloat16)
    fp8 = ft.Linear.from_linear(torch.nn.Linear(k, n, bias=False, device="cuda"),
                                ft.Recipe.seed())
    calls = {"fp8dot": lambda: fp8(x)}
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
    print(f"{'M x N x K':>18} {'op .default':>14} {'op packet':>14} {'scaled_dot':>14} "
          f"{'_scaled_mm':>14}")
    for m, n, k in shapes:
        row(f"{m}x{n}x{k}", [per_call_us(fn) for fn in gemm_calls(m, n, k)])
    print("\n2. quantise an activation (tensor scale), us per call")
    print(f"{'M x K':>18} {'fp8dot op':>14} {'torch ops':>14}")
    for m, _, k in shapes:
        row(f"{m}x{k}", [per_call_us(fn) for fn in quantize_calls(m, k)])
    print("\n3. FP8 linear forward (bf16 in and out), us per call")
    for m, n, k in shapes:
        calls = linear_calls(m, n, k)
        if m == shapes[0][0]:
            print(f"{'M x N x K':>18} " + " ".join(f"{name:>14}" for name in calls))
        row(f"{m}x{n}x{k}", [per_call_us(fn) for fn in calls.values()])


if __name__ == "__main__":
    main()
