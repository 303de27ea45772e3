"""The JAX benchmarks of issue #11, in one process on one GPU:

  ffi  a jitted FP8 dot at M = N = K (default 8192) through fp8dot's XLA FFI custom call,
       against the same GEMM run by the same C++ plan without JAX (fp8dot.scaled_dot on torch
       CUDA tensors -> CudaDotPlan::Run), interleaved round by round. The FFI adds no device
       work: the two should agree within noise.
  mlp  forward + backward of an MLP block (tokens × d → 4d → d, GELU, bf16 weights) in Flax:
       bf16; Flax's own Fp8DirectDotGeneralOp (XLA's FP8 path); fp8dot.flax.DotGeneral with
       Flax's delayed recipe, with current (tensorwise) scaling, rowwise and DeepSeek blocks.
       jit(grad) per variant, interleaved round by round; also what XLA compiled for each
       (cuBLASLt FP8 GEMM calls, fp8dot calls).

Timing: wall clock around `steps` back-to-back calls after warm-up, ended by block_until_ready
(GPU-bound: the host enqueues ahead), median over rounds. One JSON line per result, then a table.

    XLA_PYTHON_CLIENT_PREALLOCATE=false python bench/python/jax_bench.py --part ffi,mlp
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np


def wall_ms(fn, steps: int) -> float:
    start = time.perf_counter()
    out = None
    for _ in range(steps):
        out = fn()
    jax.block_until_ready(out)
    return (time.perf_counter() - start) * 1e3 / steps


# ---- ffi ----------------------------------------------------------------------------------------

def bench_ffi(size: int, rounds: int, steps: int) -> list[dict]:
    import torch

    import fp8dot
    import fp8dot.jax as fj

    a = jax.random.normal(jax.random.PRNGKey(0), (size, size), jnp.float32).astype(jnp.float8_e4m3fn)
    b = jax.random.normal(jax.random.PRNGKey(1), (size, size), jnp.float32).astype(jnp.float8_e4m3fn)
    scale = jnp.float32(1.0)
    dot = jax.jit(lambda a, b, s: fj.scaled_dot_general(
        a, b, (((1,), (1,)), ((), ())), lhs_scale=s, rhs_scale=s, precision="DEFAULT",
        preferred_element_type=jnp.bfloat16))
    jax_call = lambda: dot(a, b, scale)

    ta = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
    tb = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
    ts = torch.ones((), device="cuda")
    torch_call = lambda: fp8dot.scaled_dot(ta, tb.t(), lhs_scale=ts, rhs_scale=ts,
                                           out_dtype=torch.bfloat16, precision="default")

    def torch_ms():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            torch_call()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / steps

    for _ in range(3):  # warm-up: compile, make and tune the plan
        jax.block_until_ready(jax_call())
        torch_call()
    torch.cuda.synchronize()
    times = {"fp8dot via XLA FFI (jax.jit)": [], "fp8dot C++ plan (no JAX)": []}
    for _ in range(rounds):
        times["fp8dot via XLA FFI (jax.jit)"].append(wall_ms(jax_call, steps))
        times["fp8dot C++ plan (no JAX)"].append(torch_ms())
    flops = 2.0 * size**3
    ffi, plan = times.values()
    # Paired per round (the clock drifts between rounds, equally for both).
    ratio = statistics.median(f / p for f, p in zip(ffi, plan))
    return [{"part": "ffi", "variant": name, "shape": f"{size}^3", "ms": statistics.median(t),
             "tflops": flops / statistics.median(t) / 1e9, "runs_ms": t,
             "ffi_over_plan_paired_median": ratio}
            for name, t in times.items()]


# ---- mlp ----------------------------------------------------------------------------------------

def mlp_variants(names):
    from flax.linen import fp8_ops

    import fp8dot.flax
    import fp8dot.jax as fj

    recipes = {"delayed": fj.Recipe.seed(scaling="delayed", amax_history_length=1024),
               "seed": fj.Recipe.seed(),
               "rowwise": fj.Recipe.seed(scaling="rowwise"),
               "blocks": fj.Recipe.deepseek_blocks()}
    table = {"bf16": None, "flax-fp8 (XLA)": fp8_ops.Fp8DirectDotGeneralOp}
    # fp8dot-<recipe> quantises in jax.numpy (XLA fuses it); fp8dot-<recipe>-kernel with
    # fp8dot's fused quantisation kernel.
    for recipe_name, recipe in recipes.items():
        table[f"fp8dot-{recipe_name}"] = functools.partial(fp8dot.flax.DotGeneral, recipe=recipe)
        table[f"fp8dot-{recipe_name}-kernel"] = functools.partial(
            fp8dot.flax.DotGeneral, recipe=dataclasses.replace(recipe, quantization="kernel"))
    # +fused: the down projection takes GELU inside its quantisation (DotGeneral's activation).
    for name in names:
        if name.endswith("+fused") and name.removesuffix("+fused") in table:
            table[name] = table[name.removesuffix("+fused")]
    return {name: table[name] for name in names}


def make_block(dot_general_cls, d_model, hidden, fused=False):
    """Dense, GELU (tanh, nn.gelu's default), Dense; fused: the second Dense takes GELU inside
    its FP8 cast (fp8dot.flax.DotGeneral(activation="gelu"))."""
    import flax.linen as nn

    class MlpBlock(nn.Module):
        @nn.compact
        def __call__(self, x):
            dense = functools.partial(nn.Dense, use_bias=False, dtype=jnp.bfloat16,
                                      param_dtype=jnp.bfloat16, dot_general_cls=dot_general_cls)
            if fused:
                down = functools.partial(
                    nn.Dense, use_bias=False, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16,
                    dot_general_cls=functools.partial(dot_general_cls, activation="gelu"))
                return down(d_model)(dense(hidden)(x))
            return dense(d_model)(nn.gelu(dense(hidden)(x)))

    return MlpBlock()


def bench_mlp(tokens, d_model, hidden, rounds, steps, names) -> list[dict]:
    x = jax.random.normal(jax.random.PRNGKey(0), (tokens, d_model), jnp.bfloat16)
    dy = jax.random.normal(jax.random.PRNGKey(1), (tokens, d_model), jnp.bfloat16)
    runs = {}
    for name, cls in mlp_variants(names).items():
        block = make_block(cls, d_model, hidden, fused=name.endswith("+fused"))
        variables = block.init(jax.random.PRNGKey(2), x)

        def loss(variables, x, dy):  # dy an argument: as a constant XLA would fold its amax
            return jnp.sum(block.apply(variables, x).astype(jnp.float32) * dy)

        step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
        compiled = step.lower(variables, x, dy).compile().as_text()
        runs[name] = dict(call=functools.partial(step, variables, x, dy), times=[],
                          cublaslt_fp8=compiled.count('custom_call_target="__cublas$lt$matmul$f8"'),
                          fp8dot_calls=compiled.count('custom_call_target="fp8dot_scaled_dot"'))
        for _ in range(3):
            jax.block_until_ready(runs[name]["call"]())
    for _ in range(rounds):
        for run in runs.values():
            run["times"].append(wall_ms(run["call"], steps))
    flops = 3 * 2 * 2.0 * tokens * d_model * hidden  # 2 GEMMs, fwd + dgrad + wgrad
    bf16 = statistics.median(runs["bf16"]["times"]) if "bf16" in runs else None
    results = []
    for name, run in runs.items():
        ms = statistics.median(run["times"])
        results.append({"part": "mlp", "variant": name,
                        "shape": f"{tokens}x{d_model}->{hidden}->{d_model}", "ms": ms,
                        "tflops": flops / ms / 1e9, "vs_bf16": bf16 / ms if bf16 else None,
                        "cublaslt_fp8_gemms": run["cublaslt_fp8"],
                        "fp8dot_gemms": run["fp8dot_calls"], "runs_ms": run["times"]})
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", default="ffi,mlp")
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--d-model", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=16384)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--variants", default="bf16,flax-fp8 (XLA),fp8dot-delayed,fp8dot-seed,"
                        "fp8dot-seed-kernel,fp8dot-delayed-kernel,fp8dot-blocks,"
                        "fp8dot-blocks-kernel")
    args = parser.parse_args()
    print(f"jax {jax.__version__}, devices {jax.devices()}")
    results = []
    if "ffi" in args.part:
        results += bench_ffi(args.size, args.rounds, args.steps)
    if "mlp" in args.part:
        results += bench_mlp(args.tokens, args.d_model, args.hidden, args.rounds,
                             max(1, args.steps // 2), args.variants.split(","))
    for result in results:
        print(json.dumps(result))
    for r in results[:1]:
        if "ffi_over_plan_paired_median" in r:
            print(f"FFI / C++ plan time, median of per-round ratios: "
                  f"{r['ffi_over_plan_paired_median']:.4f}")
    print("\n| part | variant | shape | ms | TFLOP/s | vs bf16 | cuBLASLt FP8 GEMMs | fp8dot GEMMs |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        vs = f"{r['vs_bf16']:.3f}" if r.get("vs_bf16") else ""
        print(f"| {r['part']} | {r['variant']} | {r['shape']} | {r['ms']:.3f} | {r['tflops']:.0f} "
              f"| {vs} | {r.get('cublaslt_fp8_gemms', '')} | {r.get('fp8dot_gemms', '')} |")


if __name__ == "__main__":
    main()
