#!/usr/bin/env bash
# Runs on the GPU machine: the GPU tests (ctest label "gpu" = the cuda_test binary), the
# benchmarks (gpu_bench: fp8dot vs cuBLASLt direct), the torch._scaled_mm comparison, and
# compute-sanitizer memcheck over the GPU tests (racecheck and synccheck over the own GEMM's
# several-tiles tests). Logs go to $OUT; a short table is printed last.
#
# Build here first (the GPU machine has no CLI11/nlohmann/OpenBLAS dev packages):
#   cmake -S . -B build-gpu -G Ninja -DFP8DOT_CUDA=ON && ninja -C build-gpu cuda_test gpu_bench
#   mkdir -p build-gpu/lib && cp -L /lib/x86_64-linux-gnu/{libopenblas.so.0,libgfortran.so.5,libquadmath.so.0} build-gpu/lib/
# then, through the device tool, carry build-gpu/tests/cuda/cuda_test, build-gpu/gpu_bench
# and build-gpu/lib (optionally build-gpu/tests/hlo/device_executor_test,
# build-gpu/tests/dispatch_test, build-gpu/fp8dot and build-gpu/libfp8dot_c.so) and run:  FP8DOT_COMMIT=<hash> scripts/gpu-check.sh
# Steps are bounded with timeouts so the whole script ends inside one 10-minute call:
#   GPU_CHECK_SKIP_SANITIZER=1, GPU_CHECK_SKIP_BENCH=1, GPU_CHECK_SKIP_TORCH=1 turn steps off.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-gpu-check}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$BUILD/lib:$PWD/$BUILD:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
TESTS="$BUILD/tests/cuda/cuda_test"
BENCH="$BUILD/gpu_bench"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: ${FP8DOT_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total,temperature.gpu,power.draw --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
} > "$OUT/summary.md"
cat "$OUT/summary.md"

# 1. GPU tests.
echo "== GPU tests"
timeout 300 "$TESTS" > "$OUT/gpu-tests.log" 2>&1
tests_rc=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests ran" "$OUT/gpu-tests.log" | tail -30
# The other binaries with GPU tests (the HLO device executor, RunDot's cuda backend), when they
# were carried along; their logs go after the cuda_test log.
for extra in tests/hlo/device_executor_test tests/dispatch_test; do
  if [ -x "$BUILD/$extra" ]; then
    echo "== $extra" >> "$OUT/more-gpu-tests.log"
    timeout 120 "$BUILD/$extra" >> "$OUT/more-gpu-tests.log" 2>&1
    echo "$extra rc=$?"
  fi
done
[ -f "$OUT/more-gpu-tests.log" ] && grep -E "^\[  (PASSED|FAILED|SKIPPED) \]" "$OUT/more-gpu-tests.log"

# 2. Benchmarks: fp8dot and cuBLASLt direct, then torch on the same GPU.
# GPU_CHECK_REPEATS=2 times everything twice (METHOD.md: a difference smaller than the spread
# between two runs of the same thing is noise); the summary uses run 1, the logs hold both.
: > "$OUT/bench.log"
: > "$OUT/torch.log"
for run in $(seq 1 "${GPU_CHECK_REPEATS:-1}"); do
  csv_dir=$([ "$run" = 1 ] && echo "$OUT" || echo "/tmp/gpu-check-run$run")
  mkdir -p "$csv_dir"
  if [ -z "${GPU_CHECK_SKIP_BENCH:-}" ]; then
    echo "== gpu_bench (run $run)" | tee -a "$OUT/bench.log"
    timeout 400 "$BENCH" bench/shapes.txt --csv "$csv_dir/bench.csv" >> "$OUT/bench.log" 2>&1
    echo "gpu_bench rc=$?"
  fi
  if [ -z "${GPU_CHECK_SKIP_TORCH:-}" ]; then
    echo "== compare_torch.py (run $run)" | tee -a "$OUT/torch.log"
    # With libfp8dot_c.so carried along, fp8dot is also timed inside the torch process.
    library=()
    [ -f "$BUILD/libfp8dot_c.so" ] && library=(--fp8dot-library "$BUILD/libfp8dot_c.so")
    timeout 240 python3 bench/compare_torch.py bench/shapes.txt --csv "$csv_dir/torch.csv" \
      "${library[@]}" >> "$OUT/torch.log" 2>&1
    echo "compare_torch rc=$?"
  fi
done

# The CLI on the GPU, with the plan it ran (when the fp8dot binary was carried along).
if [ -x "$BUILD/fp8dot" ]; then
  for args in "--m 1000 --n 1000 --k 1000 --out-type bf16" \
              "--m 256 --n 512 --k 1024 --precision highest --lhs-scale-mode 1x128 --rhs-scale-mode 128x128 --out-type f8e4m3fn --output-scale 0.05 --amax --epilogue bias_relu"; do
    echo "\$ fp8dot dot --backend cuda --explain $args"
    "$BUILD/fp8dot" dot --backend cuda --explain $args 2>&1
  done > "$OUT/cli.log"
fi

# 3. compute-sanitizer memcheck over the GPU tests. Excluded: autotuning (it only repeats runs)
# and the out-of-memory test, whose failed cudaMalloc memcheck counts as an (expected) API error.
sanitizer_rc=skipped
if [ -z "${GPU_CHECK_SKIP_SANITIZER:-}" ] && command -v compute-sanitizer > /dev/null; then
  echo "== compute-sanitizer memcheck"
  timeout "${GPU_CHECK_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$TESTS" --gtest_filter='-*Autotuning*:*OutOfDeviceMemory*' > "$OUT/sanitizer.log" 2>&1
  sanitizer_rc=$?
  tail -3 "$OUT/sanitizer.log"
  # racecheck and synccheck where the own GEMM's CTAs walk several tiles, so that its stages are
  # refilled while the math warps still read the last ones (the cases that showed a hazard on
  # 2026-12-05). Whole cuda_test under racecheck would not fit the call.
  for tool in racecheck synccheck; do
    echo "== compute-sanitizer $tool (the own GEMM over several tiles per CTA)"
    timeout "${GPU_CHECK_RACECHECK_TIMEOUT:-120}" compute-sanitizer --tool "$tool" \
      --error-exitcode 3 "$TESTS" --gtest_filter='CudaOwnGemmTest.*SeveralTilesPerCta*' \
      > "$OUT/$tool.log" 2>&1
    echo "rc=$?"
  done
fi

# 4. The short table, last.
python3 - "$OUT" "$tests_rc" "$sanitizer_rc" <<'EOF' | tee -a "$OUT/summary.md"
import csv, os, re, sys
out, tests_rc, sanitizer_rc = sys.argv[1], sys.argv[2], sys.argv[3]
log = open(os.path.join(out, "gpu-tests.log")).read() if os.path.exists(os.path.join(out, "gpu-tests.log")) else ""
passed = re.search(r"\[  PASSED  \] (\d+) test", log)
failed = re.findall(r"\[  FAILED  \] (\S+)", log)
print(f"GPU tests: rc={tests_rc}, passed {passed.group(1) if passed else '?'}, "
      f"failed {len(set(failed))} {sorted(set(failed))[:8]}")
san = os.path.join(out, "sanitizer.log")
if os.path.exists(san):
    text = open(san).read()
    summary = re.findall(r"ERROR SUMMARY: (\d+) error", text)
    print(f"compute-sanitizer memcheck: rc={sanitizer_rc}, error summary {summary[-1:] or '?'}")
for tool in ("racecheck", "synccheck"):
    path = os.path.join(out, f"{tool}.log")
    if os.path.exists(path):
        found = re.findall(r"(?:RACECHECK|ERROR) SUMMARY: (\d+) (?:hazard|error)", open(path).read())
        print(f"compute-sanitizer {tool} (own GEMM, several tiles per CTA): "
              f"{found[-1] if found else '?'} reported")
bench, torch_rows = {}, {}
if os.path.exists(os.path.join(out, "bench.csv")):
    for r in csv.DictReader(open(os.path.join(out, "bench.csv"))):
        bench[(r["m"], r["n"], r["k"], r["config"])] = r
if os.path.exists(os.path.join(out, "torch.csv")):
    for r in csv.DictReader(open(os.path.join(out, "torch.csv"))):
        torch_rows[(r["m"], r["n"], r["k"])] = r
def tf(shape, ms):
    try:
        ms = float(ms)
        return 2.0 * int(shape[0]) * int(shape[1]) * int(shape[2]) / (ms * 1e9) if ms == ms and ms > 0 else None
    except (TypeError, ValueError):
        return None
configs = ["bf16", "fp8 fast", "fp8 fast tuned", "fp8 promoted", "fp8 promoted tuned", "row/col scales", "1x128 blocks", "1x128 row-major", "1x128 x 128x128", "1x128 x 128x128 row-major", "e4m3 x e5m2 fast"]
shapes = sorted({k[:3] for k in bench}, key=lambda s: list(bench).index(next(k for k in bench if k[:3] == s)))
if shapes:
    print()
    print("fp8dot TFLOP/s (D=bf16); min ratio = worst fp8dot/cuBLASLt-direct speed over the untuned configs")
    print("with scales in cuBLASLt's layout (the next column adds the row-major scale variants); torch = _scaled_mm")
    print("in-process = fp8dot (ctypes) / torch._scaled_mm timed in interleaved batches in one process;")
    print("memory floor = reading A and B once from HBM and writing D, nothing else (bench/memory_floor.h)")
    print("| M,N,K | " + " | ".join(configs) + " | min ratio | min ratio incl. row-major scales | torch fast | torch promoted | fast graph | torch fast graph | in-process fast | in-process promoted | fp8dot graph / torch eager | memory floor | floor / torch eager |")
    print("|---" * (len(configs) + 12) + "|")
    padded_lines = []
    for s in shapes:
        cells, ratios, all_ratios = [], [], []
        for c in configs:
            r = bench.get(s + (c,))
            t = tf(s, r["fp8dot_ms"]) if r else None
            cells.append(f"{t:.0f}" if t else "n/a")
            if r and "tuned" not in c:
                try:
                    d, f = float(r["direct_ms"]), float(r["fp8dot_ms"])
                    if d == d and f == f and d > 0 and f > 0:
                        all_ratios.append(d / f)
                        if "row-major" not in c:
                            ratios.append(d / f)
                except ValueError:
                    pass
        tr = torch_rows.get(s, {})
        g = bench.get(s + ("fp8 fast",))
        graph = tf(s, g["graph_ms"]) if g else None
        row = [",".join(s)] + cells
        row.append(f"{min(ratios):.3f}" if ratios else "n/a")
        row.append(f"{min(all_ratios):.3f}" if all_ratios else "n/a")
        row += [tr.get("fp8_fast") or "n/a", tr.get("fp8_promoted") or "n/a",
                f"{graph:.0f}" if graph else "", tr.get("fast_graph") or "",
                tr.get("fp8dot_torch_fast") or "n/a", tr.get("fp8dot_torch_promoted") or "n/a",
                tr.get("fp8dot_graph___torch_eager") or ""]
        # The memory floor (M <= 128): no kernel reading A and B from HBM is faster, so
        # floor / torch eager is the largest speedup over torch any kernel could show.
        floor_row = bench.get(s + ("memory floor",))
        floor = tf(s, floor_row["graph_ms"]) if floor_row else None
        torch_fast = float(tr["fp8_fast"]) if tr.get("fp8_fast") not in (None, "", "n/a") else None
        row += [f"{floor:.0f}" if floor else "",
                f"{floor / torch_fast:.2f}" if floor and torch_fast else ""]
        print("| " + " | ".join(row) + " |")
        # Shapes that need padding: against the direct call plus the user's own padding copies.
        padded = []
        for c in configs:
            r = bench.get(s + (c,))
            with_padding = tf(s, r.get("direct_with_padding_ms")) if r else None
            if with_padding:
                unpadded = tf(s, r.get("direct_m_unpadded_ms"))
                padded.append(f"{c} {float(r['direct_with_padding_ms']) / float(r['fp8dot_ms']):.3f}"
                              + (f" (direct, m unpadded: {unpadded:.0f} TFLOP/s)" if unpadded else ""))
        if padded:
            padded_lines.append(",".join(s) + ": " + "; ".join(padded))
    for line in padded_lines:
        print("fp8dot / (cuBLASLt direct + the user's padding copies), " + line)
EOF
