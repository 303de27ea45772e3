"""DeepGEMM's block-scaled GEMM beside fp8dot's two engines, on the same operands, in one process.

Issue #15 asks for the own engine "at or above DeepGEMM's kernels measured on the same H200 in the
same run (CUDA-graph timing, so neither pays host cost)". For each shape (lines "M N K") this
makes A [M, K] and B [N, K] in e4m3 (uniform in [-2, 2), as gpu_bench fills them), A's 1x128
scales M-major ([M, K/128] with M contiguous: the layout DeepGEMM's kernel reads without a
transform, and the one both fp8dot engines take without one), B's 128x128 scales
[ceil(N/128), K/128], all uniform in [0.5, 2). Enough copies of A and B rotate through the calls
that they stream from HBM rather than sit in L2 (three times the L2 in all, as gpu_bench does).

Three paths, bf16 D:
  deepgemm   deep_gemm.fp8_gemm_nt((A, sfa), (B, sfb), D)
  own        fp8dot.scaled_dot(A, B.T, ..., precision=HIGHEST, engine="own")
  cublaslt   fp8dot.scaled_dot(A, B.T, ..., precision=HIGHEST, engine="cublaslt")
(block scales are promoted accumulation, which fp8dot resolves from precision HIGHEST)

Each path is captured in a CUDA graph of `calls` calls and the graphs are replayed round-robin
(the order rotating every round); a path's time is the median over rounds of a replay's CUDA-event
time divided by `calls`. Before timing, the three outputs of the first operand set are compared:
DeepGEMM and the own kernel promote each 128-K block the same way (fma of the block's wgmma sum
with the f32 product of the two scales), so their outputs are expected to be bit-identical; both
are also compared with cuBLASLt's (relative Frobenius difference).

    python bench/python/deepgemm_peer.py bench/deepgemm_shapes.txt --json out.jsonl
"""

import argparse
import json
import statistics

import torch

import fp8dot

E4M3 = torch.float8_e4m3fn
PATHS = ("deepgemm", "own", "cublaslt")


def read_shapes(path: str) -> list[tuple[int, int, int]]:
    shapes = []
    with open(path) as lines:
        for line in lines:
            fields = line.split("#", 1)[0].split()
            if fields:
                shapes.append(tuple(int(f) for f in fields[:3]))
    return shapes


def uniform(shape, low: float, high: float, generator) -> torch.Tensor:
    return torch.rand(shape, device="cuda", generator=generator) * (high - low) + low


class Operands:
    """`sets` copies of A and B (and one set of scales, shared: they are small)."""

    def __init__(self, m: int, n: int, k: int, l2_bytes: int, seed: int):
        generator = torch.Generator(device="cuda").manual_seed(seed)
        k_blocks = (k + 127) // 128
        set_bytes = (m + n) * k
        self.sets = max(1, min(32, 3 * l2_bytes // set_bytes + 1)) if l2_bytes else 1
        self.lhs = [uniform((m, k), -2, 2, generator).to(E4M3) for _ in range(self.sets)]
        self.rhs = [uniform((n, k), -2, 2, generator).to(E4M3) for _ in range(self.sets)]
        # M-major: [K/128, M] contiguous, seen as [M, K/128].
        self.lhs_scale = uniform((k_blocks, m), 0.5, 2, generator).t()
        self.rhs_scale = uniform(((n + 127) // 128, k_blocks), 0.5, 2, generator)
        self.output = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")

    def call(self, path: str, i: int) -> torch.Tensor:
        lhs, rhs = self.lhs[i % self.sets], self.rhs[i % self.sets]
        if path == "deepgemm":
            import deep_gemm

            deep_gemm.fp8_gemm_nt((lhs, self.lhs_scale), (rhs, self.rhs_scale), self.output)
            return self.output
        return fp8dot.scaled_dot(lhs, rhs.t(), lhs_scale=self.lhs_scale,
                                 rhs_scale=self.rhs_scale.t(), out_dtype="bfloat16",
                                 precision=("highest", "highest"), engine=path)


def compare(operands: Operands) -> dict:
    # .float() copies: DeepGEMM's next call overwrites its output buffer.
    outputs = {path: operands.call(path, 0).float() for path in PATHS}
    torch.cuda.synchronize()
    reference = outputs["cublaslt"]
    norm = reference.norm().item()
    return {
        "own_vs_deepgemm_max_abs": (outputs["own"] - outputs["deepgemm"]).abs().max().item(),
        "own_vs_deepgemm_bit_identical": bool(torch.equal(outputs["own"], outputs["deepgemm"])),
        "deepgemm_vs_cublaslt_rel": (outputs["deepgemm"] - reference).norm().item() / norm,
        "own_vs_cublaslt_rel": (outputs["own"] - reference).norm().item() / norm,
    }


def capture(operands: Operands, path: str, calls: int) -> torch.cuda.CUDAGraph:
    # Warm up outside the capture: plans, autotuning, DeepGEMM's JIT.
    for i in range(2):
        operands.call(path, i)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            operands.call(path, i)
    return graph


def replay_ms(graph: torch.cuda.CUDAGraph) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", help="file of 'M N K' lines")
    parser.add_argument("--calls", type=int, default=20, help="calls per CUDA graph")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="also write one JSON line per shape here")
    parser.add_argument("--warm-only", action="store_true",
                        help="only call DeepGEMM once per shape (its JIT compiles the kernel "
                        "into DG_JIT_CACHE_DIR), so that several processes can compile at once")
    args = parser.parse_args()

    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    if args.warm_only:
        for m, n, k in read_shapes(args.shapes):
            Operands(m, n, k, l2_bytes=0, seed=0).call("deepgemm", 0)
        torch.cuda.synchronize()
        return
    rows = []
    for m, n, k in read_shapes(args.shapes):
        operands = Operands(m, n, k, l2_bytes, seed=m * 131 + n * 7 + k)
        row = {"m": m, "n": n, "k": k, "sets": operands.sets, **compare(operands)}
        graphs = {path: capture(operands, path, args.calls) for path in PATHS}
        for graph in graphs.values():
            replay_ms(graph)
        times = {path: [] for path in PATHS}
        for r in range(args.rounds):
            order = PATHS[r % 3:] + PATHS[:r % 3]
            for path in order:
                times[path].append(replay_ms(graphs[path]) / args.calls)
        flops = 2.0 * m * n * k
        for path in PATHS:
            row[f"{path}_ms"] = statistics.median(times[path])
            row[f"{path}_tflops"] = flops / row[f"{path}_ms"] / 1e9
        rows.append(row)
        print(json.dumps(row), flush=True)
        del graphs, operands
        torch.cuda.empty_cache()

    if args.json:
        with open(args.json, "w") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
    print("\n| M,N,K | DeepGEMM | own | cuBLASLt | own/DeepGEMM | own/cuBLASLt | DeepGEMM/cuBLASLt "
          "| own = DeepGEMM bits |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['m']},{r['n']},{r['k']} | {r['deepgemm_tflops']:.0f} | {r['own_tflops']:.0f} | "
              f"{r['cublaslt_tflops']:.0f} | {r['deepgemm_ms'] / r['own_ms']:.3f} | "
              f"{r['cublaslt_ms'] / r['own_ms']:.3f} | {r['cublaslt_ms'] / r['deepgemm_ms']:.3f} | "
              f"{'yes' if r['own_vs_deepgemm_bit_identical'] else 'no (max ' + format(r['own_vs_deepgemm_max_abs'], '.3g') + ')'} |")


if __name__ == "__main__":
    main()
