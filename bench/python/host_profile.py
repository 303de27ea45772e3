"""Runs one small-M FP8 call back to back for a while, so that a sampling profiler (py-spy
--native, scripts/gpu-host-profile.sh) sees where its host time goes, frame by frame.

    python bench/python/host_profile.py CALL [--seconds S] [--m M --n N --k K]

CALL is a column name of bench/python/small_shape_overhead.py's tables, which defines the calls:
"op .default", "_scaled_mm", "fp8dot op" (quantisation), "fp8dot", "fp8dot cached", "torch
path", "torchao", ... (no_grad, as there). Prints the calls made and the microseconds per call.
"""

import argparse
import contextlib
import time

import torch

from small_shape_overhead import gemm_calls, linear_calls, quantize_calls


def make_call(name, m, n, k, contexts: contextlib.ExitStack):
    for make_calls, arguments in ((gemm_calls, (m, n, k)), (quantize_calls, (m, k)),
                                  (linear_calls, (m, n, k, contexts))):
        calls = make_calls(*arguments)
        if name in calls:
            return calls[name]
    raise SystemExit(f"unknown call {name!r}: a column name of small_shape_overhead.py's tables")


@torch.no_grad()
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("call")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--m", type=int, default=64)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=4096)
    options = parser.parse_args()
    with contextlib.ExitStack() as contexts:
        fn = make_call(options.call, options.m, options.n, options.k, contexts)
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        calls = 0
        start = time.perf_counter()
        while time.perf_counter() - start < options.seconds:
            for _ in range(100):
                fn()
            calls += 100
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        print(f"{options.call} {options.m}x{options.n}x{options.k}: {calls} calls, "
              f"{elapsed / calls * 1e6:.2f} us per call")


if __name__ == "__main__":
    main()
