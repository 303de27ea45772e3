"""Runs one small-M FP8 call back to back for a while, so that a sampling profiler (py-spy
--native, scripts/gpu-host-profile.sh) sees where its host time goes, frame by frame.

    python bench/python/host_profile.py CALL [--seconds S] [--m M --n N --k K]

CALL is one of: op (torch.ops.fp8dot.scaled_mm.default, as fp8dot.torch.Linear calls it),
scaled_mm (torch._scaled_mm, the peer), quantize (fp8dot's fused quantisation, tensor scale),
linear (fp8dot.torch.Linear forward, seed recipe, no_grad), linear-cached (the same inside
fp8dot.torch.cached_weights), torchao (torchao's Float8Linear forward). Prints the calls made
and the microseconds per call.
"""

import argparse
import contextlib
import time

import torch

import fp8dot.torch as ft

E4M3 = torch.float8_e4m3fn


def make_call(name, m, n, k, contexts: contextlib.ExitStack):
    a = torch.randn(m, k, device="cuda").to(E4M3)
    b = torch.randn(n, k, device="cuda").to(E4M3).t()
    one = torch.ones((), device="cuda")
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    if name == "op":
        args = (a, b, one, one, None, None, torch.bfloat16, "default", "default", False, "auto")
        return lambda: torch.ops.fp8dot.scaled_mm.default(*args)
    if name == "scaled_mm":
        return lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16,
                                        use_fast_accum=True)
    if name == "quantize":
        return lambda: ft.quantize(x, E4M3, "tensor")
    if name in ("linear", "linear-cached"):
        layer = ft.Linear.from_linear(torch.nn.Linear(k, n, bias=False, device="cuda"),
                                      ft.Recipe.seed())
        if name == "linear":
            return lambda: layer(x)
        # Open until main's ExitStack closes (a context entered here and dropped would close
        # when its generator is collected, and the layer would quantise every call).
        contexts.enter_context(ft.cached_weights(layer))
        return lambda: layer(x)
    if name == "torchao":
        from torchao.float8 import convert_to_float8_training

        peer = convert_to_float8_training(torch.nn.Sequential(
            torch.nn.Linear(k, n, bias=False, device="cuda")))
        return lambda: peer(x)
    raise SystemExit(f"unknown call {name!r}")


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
