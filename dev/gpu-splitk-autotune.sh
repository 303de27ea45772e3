#!/usr/bin/env bash
# Runs on the GPU machine (carry build/tests/cuda/cuda_test, build/gpu_bench, build/lib): the GPU
# tests, then gpu_bench and torch._scaled_mm on the launch-bound shapes (M <= 128, and 1000^3)
# for the untuned and autotuned FP8 plans (autotuning adds split-K variants). Logs in $OUT.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-splitk-autotune}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/lib:${LD_LIBRARY_PATH:-}"
{ date -u '+date: %Y-%m-%d %H:%M:%S UTC'; echo "commit: ${FP8DOT_COMMIT:-unknown}";
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } | tee "$OUT/summary.txt"
timeout 300 build/tests/cuda/cuda_test > "$OUT/gpu-tests.log" 2>&1
echo "cuda_test rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|identical" "$OUT/gpu-tests.log"
grep -E "^ *(128|64) " bench/shapes.txt > "$OUT/shapes.txt"; echo "1000 1000 1000" >> "$OUT/shapes.txt"
for run in 1 2; do
  timeout 150 build/gpu_bench "$OUT/shapes.txt" \
    --configs "fp8 fast,fp8 fast tuned,fp8 promoted,fp8 promoted tuned" >> "$OUT/bench.log" 2>&1
  echo "gpu_bench run $run rc=$?"
  timeout 120 python3 bench/compare_torch.py "$OUT/shapes.txt" >> "$OUT/torch.log" 2>&1
  echo "torch run $run rc=$?"
done
grep -E "^\|" "$OUT/bench.log" | cut -c1-400
cat "$OUT/torch.log"
