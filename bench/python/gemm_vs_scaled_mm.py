"""The MLP block's six FP8 GEMMs, each alone: torch.ops.fp8dot.scaled_mm against torch._scaled_mm
on the same operands, GPU time per call.

The MLP-block profiles showed the same cuBLASLt kernels running a few percent longer under
fp8dot than under torchao; this isolates the GEMMs from everything else in the step. Each call
is timed with CUDA events around `calls` back-to-back calls, median over rounds, the two paths
interleaved round by round. Prints one JSON line per GEMM and a table.

    python bench/python/gemm_vs_scaled_mm.py --tokens 8192 --d-model 4096 --hidden 16384
"""

import argparse
import json
import statistics

import torch

import fp8dot
import fp8dot.torch  # noqa: F401  (registers torch.ops.fp8dot)

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def gemms(tokens: int, d_model: int, hidden: int):
    """(name, M, N, K, lhs dtype, rhs dtype, fast accumulation) of fp8dot.torch.Linear's GEMMs
    in the block under the seed recipe: forward e4m3 x e4m3 fast, gradients e5m2 x e4m3
    promoted."""
    for layer, (d_in, d_out) in (("up", (d_model, hidden)), ("down", (hidden, d_model))):
        yield f"{layer} forward", tokens, d_out, d_in, E4M3, E4M3, True
        yield f"{layer} dgrad", tokens, d_in, d_out, E5M2, E4M3, False
        yield f"{layer} wgrad", d_out, d_in, tokens, E5M2, E4M3, False


def gpu_ms(fn, calls: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def kernels(fn) -> list[str]:
    """The names and GPU times (µs) of the kernels one call launches."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [f"{event.name[:90]} {event.device_time:.1f}us" for event in prof.events()
            if event.device_type == torch.autograd.DeviceType.CUDA]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--d-model", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=16384)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="print each path's kernels")
    args = parser.parse_args()

    rows = []
    for name, m, n, k, lhs_dtype, rhs_dtype, fast in gemms(args.tokens, args.d_model, args.hidden):
        generator = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
        lhs = torch.randn(m, k, device="cuda", generator=generator).to(lhs_dtype)
        rhs = torch.randn(n, k, device="cuda", generator=generator).to(rhs_dtype)
        scale_lhs = torch.rand((), device="cuda", generator=generator) + 0.5
        scale_rhs = torch.rand((), device="cuda", generator=generator) + 0.5
        precision = "default" if fast else "highest"

        def ours():
            return torch.ops.fp8dot.scaled_mm.default(lhs, rhs.t(), scale_lhs, scale_rhs, None,
                                                      None, torch.bfloat16, precision, precision,
                                                      False, "auto")[0]

        def theirs():
            return torch._scaled_mm(lhs, rhs.t(), scale_lhs, scale_rhs, out_dtype=torch.bfloat16,
                                    use_fast_accum=fast)

        # Same operands, same accumulation class: the outputs must agree to bf16 rounding.
        difference = (ours().float() - theirs().float()).abs().max().item()
        scale = theirs().float().abs().max().item()
        times = {"fp8dot": [], "_scaled_mm": []}
        for _ in range(args.rounds):
            times["fp8dot"].append(gpu_ms(ours, args.calls))
            times["_scaled_mm"].append(gpu_ms(theirs, args.calls))
        row = {"gemm": name, "m": m, "n": n, "k": k, "fast": fast,
               "fp8dot_ms": round(statistics.median(times["fp8dot"]), 4),
               "scaled_mm_ms": round(statistics.median(times["_scaled_mm"]), 4),
               "max_difference_relative": difference / scale}
        row["fp8dot_tflops"] = round(2 * m * n * k / row["fp8dot_ms"] / 1e9, 1)
        row["ratio"] = round(row["fp8dot_ms"] / row["scaled_mm_ms"], 4)
        if args.profile:
            row["fp8dot_kernels"], row["scaled_mm_kernels"] = kernels(ours), kernels(theirs)
            try:
                row["fp8dot_plan"] = fp8dot.explain(lhs, rhs.t(), lhs_scale=scale_lhs,
                                                    rhs_scale=scale_rhs, out_dtype="bfloat16",
                                                    precision=(precision, precision))
            except (ValueError, RuntimeError) as error:
                row["fp8dot_plan"] = f"{type(error).__name__}: {error}"
        rows.append(row)
        print(json.dumps(row))
    print(f"\n{'gemm':14} {'M x N x K':>20} {'fp8dot ms':>10} {'_scaled_mm':>11} {'ratio':>7}")
    for row in rows:
        shape = f"{row['m']}x{row['n']}x{row['k']}"
        print(f"{row['gemm']:14} {shape:>20} {row['fp8dot_ms']:10.4f} {row['scaled_mm_ms']:11.4f} "
              f"{row['ratio']:7.3f}")
    print(f"total {sum(r['fp8dot_ms'] for r in rows):.4f} ms vs "
          f"{sum(r['scaled_mm_ms'] for r in rows):.4f} ms")


if __name__ == "__main__":
    main()
