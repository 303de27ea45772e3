"""Host cost of one FP8 GEMM call at small M: fp8dot's torch op vs torch._scaled_mm (eager).

At M ≤ 128 the GPU finishes a GEMM in a few microseconds, so the time per call of a loop of
calls is the host cost of launching it. Median over rounds of 200 back-to-back calls.
"""

import statistics
import time

import torch

import fp8dot.torch  # noqa: F401  (registers torch.ops.fp8dot)


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


def main():
    print(f"{'M':>5} {'N':>6} {'K':>6} {'fp8dot op us':>13} {'fp8dot.scaled_dot us':>21} {'torch._scaled_mm us':>20}")
    for m, n, k in [(16, 4096, 4096), (64, 4096, 4096), (128, 7168, 2048)]:
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")
        op = lambda: torch.ops.fp8dot.scaled_mm(a, b, one, one, None, None, torch.bfloat16,
                                                "default", "default", False, "auto")
        direct = lambda: fp8dot.scaled_dot(a, b, lhs_scale=one, rhs_scale=one, out_dtype=torch.bfloat16)
        peer = lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
        print(f"{m:5d} {n:6d} {k:6d} {per_call_us(op):13.1f} {per_call_us(direct):21.1f} {per_call_us(peer):20.1f}")


if __name__ == "__main__":
    main()
