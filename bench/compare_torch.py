#!/usr/bin/env python3
"""torch._scaled_mm on the benchmark shapes, timed like bench/gpu_bench.cc, for comparison.

Usage: compare_torch.py [shapes.txt] [--csv out.csv]

Per shape: bf16 torch.matmul; torch._scaled_mm (e4m3 x e4m3 -> bf16, tensor scales) with
use_fast_accum=True ("fast") and False ("promoted"); row-wise scales (promoted); and for M <= 128
the fast call replayed from a CUDA graph of 20 calls. A is row-major [M,K], B column-major [K,N]
(b.t() of a row-major [N,K]) -- the TN layout _scaled_mm requires. Timing: CUDA events around
batches of back-to-back calls after warm-up, median of 5 batches (from Python, so the per-call
overhead is included); inputs rotate among copies when one set fits in L2. 2*M*N*K flops.
"""
import argparse
import statistics
import sys

import torch

WARMUP = 3
BATCHES = 5
TARGET_BATCH_MS = 20.0
GRAPH_CALLS = 20


def read_shapes(path):
    shapes = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                m, n, k = (int(x) for x in line.split()[:3])
                shapes.append((m, n, k))
    return shapes


def time_calls(call):
    """Median milliseconds per call of call(i)."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    counter = [0]

    def batch(calls):
        start.record()
        for _ in range(calls):
            call(counter[0])
            counter[0] += 1
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / calls

    batch(WARMUP)
    estimate = batch(3)
    calls = int(min(500, max(5, TARGET_BATCH_MS / max(estimate, 1e-4))))
    return statistics.median(batch(calls) for _ in range(BATCHES))


def time_graph(call):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(3):  # warm up on the side stream before capture, as torch requires
            call(i)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(GRAPH_CALLS):
            call(i)
    return time_calls(lambda i: graph.replay()) / GRAPH_CALLS


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e9)


def measure(m, n, k, l2_bytes):
    dev = "cuda"
    fp8 = torch.float8_e4m3fn
    set_bytes = (m + n) * k
    sets = max(1, min(32, 3 * l2_bytes // set_bytes + 1))
    a8 = [(torch.rand(m, k, device=dev) * 4 - 2).to(fp8) for _ in range(sets)]
    b8 = [(torch.rand(n, k, device=dev) * 4 - 2).to(fp8).t() for _ in range(sets)]
    one = torch.tensor(1.0, device=dev)
    row_a = torch.rand(m, 1, device=dev) + 0.5
    row_b = torch.rand(1, n, device=dev) + 0.5
    results = {}

    def scaled(i, fast, rowwise=False):
        j = i % sets
        return torch._scaled_mm(a8[j], b8[j], scale_a=row_a if rowwise else one,
                                scale_b=row_b if rowwise else one, out_dtype=torch.bfloat16,
                                use_fast_accum=fast)

    for name, call in [("fp8 fast", lambda i: scaled(i, True)),
                       ("fp8 promoted", lambda i: scaled(i, False)),
                       ("row/col scales", lambda i: scaled(i, False, True))]:
        try:
            results[name] = tflops(m, n, k, time_calls(call))
        except Exception as e:  # e.g. K or N not a multiple of 16
            results[name] = None
            results.setdefault("note", str(e).split("\n")[0][:80])
    if m <= 128 and results.get("fp8 fast"):
        results["fast graph"] = tflops(m, n, k, time_graph(lambda i: scaled(i, True)))
    del a8, b8
    bsets = max(1, min(32, 3 * l2_bytes // (2 * set_bytes) + 1))
    a16 = [torch.rand(m, k, device=dev, dtype=torch.bfloat16) * 4 - 2 for _ in range(bsets)]
    b16 = [(torch.rand(n, k, device=dev, dtype=torch.bfloat16) * 4 - 2).t() for _ in range(bsets)]
    results["bf16"] = tflops(m, n, k, time_calls(
        lambda i: torch.matmul(a16[i % bsets], b16[i % bsets])))
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shapes", nargs="?", default="bench/shapes.txt")
    parser.add_argument("--csv")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("compare_torch: no CUDA device", file=sys.stderr)
        return 77
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    columns = ["bf16", "fp8 fast", "fp8 promoted", "row/col scales", "fast graph"]
    print(f"# torch {torch.__version__} _scaled_mm on {props.name}, TFLOP/s, D = bf16")
    print("| M,N,K | " + " | ".join(columns) + " | note |")
    print("|---" * (len(columns) + 2) + "|")
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        csv.write("m,n,k," + ",".join(c.replace(" ", "_").replace("/", "_") for c in columns)
                  + "\n")
    for m, n, k in read_shapes(args.shapes):
        r = measure(m, n, k, l2)
        cells = [f"{r[c]:.0f}" if r.get(c) else ("" if c == "fast graph" else "n/a")
                 for c in columns]
        print(f"| {m},{n},{k} | " + " | ".join(cells) + f" | {r.get('note', '')} |", flush=True)
        if csv:
            csv.write(f"{m},{n},{k}," + ",".join(f"{r[c]:.1f}" if r.get(c) else ""
                                                  for c in columns) + "\n")
        torch.cuda.empty_cache()
    if csv:
        csv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
