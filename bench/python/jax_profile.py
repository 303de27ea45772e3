"""Where the time of one jax_bench.py MLP-block variant goes: its XLA-compiled program (written to
OUT/<variant>.hlo) and, from a profiler trace of a few steps, the GPU time per kernel name,
largest first; then the GPU's idle time per step (the span of its kernels less their union) and
the kernel pairs the largest idle gaps fall between, and the host's longest events (what the
host did while the GPU waited, when it did).

    python bench/python/jax_profile.py --variants "flax-fp8 (XLA),fp8dot-delayed" --out /tmp/prof
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import re
import sys

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.dirname(__file__))
from jax_bench import make_block, mlp_variants  # noqa: E402


def kernel_times(trace_dir: str) -> collections.Counter:
    """GPU microseconds per kernel name, from the Perfetto trace jax.profiler wrote."""
    processes, events = _trace_events(trace_dir)
    times = collections.Counter()
    for event in events:
        if "/device:GPU" in processes.get(event["pid"], ""):
            times[event["name"]] += event.get("dur", 0)
    return times


def _trace_events(trace_dir: str):
    files = glob.glob(os.path.join(trace_dir, "**", "*.trace.json.gz"), recursive=True)
    if not files:
        return {}, []
    with gzip.open(max(files, key=os.path.getmtime)) as f:
        trace = json.load(f)
    processes = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    return processes, [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def idle_report(trace_dir: str, steps: int, top: int = 8) -> str:
    """GPU idle per step between its first and last kernel, the (before, after) kernel pairs of
    the idle gaps longer than 5 us by total time, and the host events that took longest."""
    processes, events = _trace_events(trace_dir)
    gpu = sorted((e for e in events if "/device:GPU" in processes.get(e["pid"], "")),
                 key=lambda e: e["ts"])
    if not gpu:
        return "  (no GPU events in the trace)"
    start = busy_until = gpu[0]["ts"]
    busy, gaps, previous = 0.0, collections.Counter(), gpu[0]["name"]
    for event in gpu:
        begin, end = event["ts"], event["ts"] + event.get("dur", 0)
        if begin - busy_until > 5:
            gaps[(previous[:60], event["name"][:60])] += begin - busy_until
        busy += max(0.0, end - max(begin, busy_until))
        if end >= busy_until:
            busy_until, previous = end, event["name"]
    span = busy_until - start
    lines = [f"  GPU span {span / steps / 1e3:.3f} ms per step, busy {busy / steps / 1e3:.3f}, "
             f"idle {(span - busy) / steps / 1e3:.3f}"]
    for (before, after), us in gaps.most_common(top):
        lines.append(f"  idle {us / steps:8.1f} us/step  after {before}  before {after}")
    host = collections.Counter()
    for event in events:
        if "/host" in processes.get(event["pid"], ""):
            host[event["name"][:80]] += event.get("dur", 0)
    lines.append("  host, longest events in all (us per step):")
    for name, us in host.most_common(top * 2):
        lines.append(f"  {us / steps:9.1f}  {name}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variants", default="flax-fp8 (XLA),fp8dot-delayed,fp8dot-seed")
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--d-model", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=16384)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", default=os.environ.get("OUT", "/tmp/fp8dot-profile"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    x = jax.random.normal(jax.random.PRNGKey(0), (args.tokens, args.d_model), jnp.bfloat16)
    dy = jax.random.normal(jax.random.PRNGKey(1), (args.tokens, args.d_model), jnp.bfloat16)
    for name, cls in mlp_variants(args.variants.split(",")).items():
        block = make_block(cls, args.d_model, args.hidden, fused=name.endswith("+fused"))
        variables = block.init(jax.random.PRNGKey(2), x)
        step = jax.jit(jax.value_and_grad(
            lambda v, x, dy: jnp.sum(block.apply(v, x).astype(jnp.float32) * dy), argnums=(0, 1)))
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        with open(os.path.join(args.out, f"{slug}.hlo"), "w") as f:
            f.write(step.lower(variables, x, dy).compile().as_text())
        for _ in range(3):
            jax.block_until_ready(step(variables, x, dy))
        trace_dir = os.path.join(args.out, f"trace-{slug}")
        with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
            for _ in range(args.steps):
                out = step(variables, x, dy)
            jax.block_until_ready(out)
        times = kernel_times(trace_dir)
        total = sum(times.values()) / args.steps
        print(f"\n== {name}: {total / 1e3:.3f} ms of GPU kernels per step")
        for kernel, us in times.most_common(25):
            print(f"  {us / args.steps:9.1f} us  {kernel[:150]}")
        print(idle_report(trace_dir, args.steps))


if __name__ == "__main__":
    main()
