#!/usr/bin/env python3
"""torch._scaled_mm on the benchmark shapes, timed like bench/gpu_bench.cc, for comparison.

Usage: compare_torch.py [shapes.txt] [--csv out.csv] [--fp8dot-library build/libfp8dot_c.so]

Per shape: bf16 torch.matmul; torch._scaled_mm (e4m3 x e4m3 -> bf16, tensor scales) with
use_fast_accum=True ("fast") and False ("promoted"); row-wise scales (promoted); and for M <= 128
the fast call replayed from a CUDA graph of 20 calls. A is row-major [M,K], B column-major [K,N]
(b.t() of a row-major [N,K]) -- the TN layout _scaled_mm requires. Timing: CUDA events around
batches of back-to-back calls after warm-up, median of 5 batches (from Python, so the per-call
overhead is included); inputs rotate among copies when one set fits in L2. 2*M*N*K flops.

With --fp8dot-library, fp8dot is timed in the same process on the same tensors and stream,
called from Python through its C entry point (include/fp8dot/c_api.h, via ctypes) exactly like
torch._scaled_mm, in batches interleaved with torch's (A B B A ..., 12 each, median of each) so
that both see the same clocks; the "fp8dot ..." columns and the ratios come from that.
"""
import ctypes
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


class Batches:
    """Times batches of back-to-back calls with CUDA events; call(i) gets a count of all calls
    so far (for rotating inputs)."""

    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)
        self.counter = 0

    def __call__(self, call, calls):
        """Milliseconds per call over `calls` back-to-back calls."""
        self.start.record()
        for _ in range(calls):
            call(self.counter)
            self.counter += 1
        self.stop.record()
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop) / calls

    def calls_per_batch(self, call):
        """Warms `call` up; how many calls make a batch of about TARGET_BATCH_MS."""
        self(call, WARMUP)
        estimate = self(call, 3)
        return int(min(500, max(5, TARGET_BATCH_MS / max(estimate, 1e-4))))


def time_calls(call):
    """Median milliseconds per call of call(i)."""
    batch = Batches()
    calls = batch.calls_per_batch(call)
    return statistics.median(batch(call, calls) for _ in range(BATCHES))


def time_interleaved(call_a, call_b, batches=12):
    """Median milliseconds per call of call_a(i) and call_b(i), in interleaved batches."""
    batch = Batches()
    batch(call_b, WARMUP)
    calls = batch.calls_per_batch(call_a)
    for _ in range(3):
        batch(call_a, calls)
        batch(call_b, calls)
    a_times, b_times = [], []
    for b in range(batches):
        order = (call_a, call_b) if b % 4 in (0, 3) else (call_b, call_a)
        for call in order:
            (a_times if call is call_a else b_times).append(batch(call, calls))
    return statistics.median(a_times), statistics.median(b_times)


def graph_of(call):
    """A CUDA graph of GRAPH_CALLS calls of call(i); replaying it is one call of the result."""
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
    return lambda i: graph.replay()


class Fp8dot:
    """fp8dot_scaled_mm from libfp8dot_c.so, called like torch._scaled_mm."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        f = self.lib.fp8dot_scaled_mm
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int64] * 3 + [ctypes.c_char_p] * 4 + [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        self.error = ctypes.create_string_buffer(1024)

    def scaled_mm(self, a, b, scale_a, scale_b, out, fast):
        m, k = a.shape
        n = b.shape[1]
        rc = self.lib.fp8dot_scaled_mm(
            a.data_ptr(), b.data_ptr(), scale_a.data_ptr(), scale_b.data_ptr(), out.data_ptr(),
            m, n, k, b"f8e4m3fn", b"f8e4m3fn", b"bf16", b"default" if fast else b"highest",
            torch.cuda.current_stream().cuda_stream, self.error, 1024)
        if rc != 0:
            raise RuntimeError(self.error.value.decode())
        return out


def time_graph(call):
    return time_calls(graph_of(call)) / GRAPH_CALLS


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e9)


def measure(m, n, k, l2_bytes, fp8dot=None):
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
    if fp8dot is not None and results.get("fp8 fast"):
        out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)

        def ours(i, fast):
            j = i % sets
            return fp8dot.scaled_mm(a8[j], b8[j], one, one, out, fast)

        # Both results agree before anything is timed (same inputs, same accumulation).
        for fast in (True, False):
            expected = scaled(0, fast).float()
            got = ours(0, fast).float()
            error = ((got - expected).norm() / expected.norm()).item()
            if not error < 2e-2:
                raise RuntimeError(f"fp8dot and torch disagree at {m},{n},{k}: {error}")
        for fast, name in ((True, "fast"), (False, "promoted")):
            t_ours, t_torch = time_interleaved(lambda i: ours(i, fast), lambda i: scaled(i, fast))
            results[f"fp8dot {name}"] = tflops(m, n, k, t_ours)
            results[f"torch {name} (interleaved)"] = tflops(m, n, k, t_torch)
        if m <= 128:
            g_ours = graph_of(lambda i: ours(i, True))
            g_torch = graph_of(lambda i: scaled(i, True))
            t_ours, t_torch = time_interleaved(g_ours, g_torch)
            results["fp8dot fast graph"] = tflops(m, n, k, t_ours / GRAPH_CALLS)
            results["torch fast graph (interleaved)"] = tflops(m, n, k, t_torch / GRAPH_CALLS)
            # The launch-bound target: fp8dot replayed from a graph vs torch called eagerly.
            results["fp8dot graph / torch eager"] = (results["fp8dot fast graph"] /
                                                     results["torch fast (interleaved)"])
        results["fp8dot/torch fast"] = results["fp8dot fast"] / results["torch fast (interleaved)"]
        results["fp8dot/torch promoted"] = (results["fp8dot promoted"] /
                                            results["torch promoted (interleaved)"])
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
    parser.add_argument("--fp8dot-library", help="libfp8dot_c.so: also time fp8dot in-process")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("compare_torch: no CUDA device", file=sys.stderr)
        return 77
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    columns = ["bf16", "fp8 fast", "fp8 promoted", "row/col scales", "fast graph"]
    fp8dot = Fp8dot(args.fp8dot_library) if args.fp8dot_library else None
    if fp8dot is not None:
        columns += ["torch fast (interleaved)", "fp8dot fast", "torch promoted (interleaved)",
                    "fp8dot promoted", "torch fast graph (interleaved)", "fp8dot fast graph",
                    "fp8dot/torch fast", "fp8dot/torch promoted", "fp8dot graph / torch eager"]
    print(f"# torch {torch.__version__} _scaled_mm on {props.name}, TFLOP/s, D = bf16")
    print("| M,N,K | " + " | ".join(columns) + " | note |")
    print("|---" * (len(columns) + 2) + "|")
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        csv.write("m,n,k," + ",".join(c.replace(" ", "_").replace("/", "_") for c in columns)
                  + "\n")
    for m, n, k in read_shapes(args.shapes):
        r = measure(m, n, k, l2, fp8dot)
        cells = [(f"{r[c]:.3f}" if c.startswith("fp8dot/") or " / " in c else f"{r[c]:.0f}")
                 if r.get(c)
                 else ("" if "graph" in c else "n/a") for c in columns]
        print(f"| {m},{n},{k} | " + " | ".join(cells) + f" | {r.get('note', '')} |", flush=True)
        if csv:
            csv.write(f"{m},{n},{k}," + ",".join(
                (f"{r[c]:.3f}" if c.startswith("fp8dot/") or " / " in c else f"{r[c]:.1f}")
                if r.get(c) else ""
                for c in columns) + "\n")
        torch.cuda.empty_cache()
    if csv:
        csv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
