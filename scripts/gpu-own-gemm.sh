#!/usr/bin/env bash
# On the GPU machine: fp8dot's own GEMM engine (#15). Runs its GPU tests (bit-identity with the
# CPU emulation), compute-sanitizer memcheck over them, and gpu_bench's own-kernel config against
# cuBLASLt (same scales, interleaved, same run) on DeepGEMM's shapes and the suite. Logs go to
# $OUT; a short table is printed last.
#   carry: build/tests/cuda/cuda_test build/gpu_bench build/wheel-cp312 (OpenBLAS libraries)
# Environment: BUILD (default build), OWN_SHAPES (default bench/deepgemm_shapes.txt),
#   SKIP_SANITIZER=1, SKIP_SUITE=1, OWN_TEST_FILTER (default CudaOwnGemm*), SANITIZER_FILTER
#   (the tests compute-sanitizer runs; default OWN_TEST_FILTER),
#   OWN_TILES (a comma-separated list: also time each of these tiles on OWN_SHAPES),
#   OWN_CONFIGS (gpu_bench configs on OWN_SHAPES and the tiles; default "1x128 x 128x128 own"),
#   SUITE_CONFIGS (gpu_bench configs on the suite; default OWN_CONFIGS), SKIP_TRAINING=1
#   (skips the training benchmarks' GEMMs, bench/training_shapes.txt, in the three own modes:
#   the region of the auto rule's M >= 4096 case).
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-own-gemm}
BUILD=${BUILD:-build}
OWN_CONFIGS=${OWN_CONFIGS:-1x128 x 128x128 own}
SUITE_CONFIGS=${SUITE_CONFIGS:-$OWN_CONFIGS}
mkdir -p "$OUT" /tmp/fp8dot-libs
tar xJf build/wheel-cp312/openblas-libs.tar.xz -C /tmp/fp8dot-libs
export LD_LIBRARY_PATH=/tmp/fp8dot-libs/lib:$PWD/$BUILD:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"

echo "== own GEMM tests"
timeout 240 "$BUILD/tests/cuda/cuda_test" --gtest_filter="${OWN_TEST_FILTER:-CudaOwnGemm*}" \
  > "$OUT/own-tests.log" 2>&1
echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|^\[ +(OK|FAILED) +\]|Failure|first difference" "$OUT/own-tests.log" | head -30

echo "== gpu_bench: own kernel vs cuBLASLt ($OWN_CONFIGS), DeepGEMM's shapes"
timeout 300 "$BUILD/gpu_bench" "${OWN_SHAPES:-bench/deepgemm_shapes.txt}" \
  --configs "$OWN_CONFIGS" --csv "$OUT/own-deepgemm.csv" > "$OUT/own-deepgemm.md" 2>&1
echo "bench rc=$?"
if [[ -n "${OWN_TILES:-}" ]]; then
  timeout 400 "$BUILD/gpu_bench" "${OWN_SHAPES:-bench/deepgemm_shapes.txt}" \
    --configs "$OWN_CONFIGS" --own-tiles "$OWN_TILES" --csv "$OUT/own-tiles.csv" \
    > "$OUT/own-tiles.md" 2>&1
  echo "tile sweep rc=$?"
fi
if [[ "${SKIP_SUITE:-0}" != 1 ]]; then
  timeout 300 "$BUILD/gpu_bench" bench/shapes.txt --configs "$SUITE_CONFIGS" \
    --csv "$OUT/own-suite.csv" > "$OUT/own-suite.md" 2>&1
  echo "suite bench rc=$?"
fi
if [[ "${SKIP_TRAINING:-0}" != 1 ]]; then
  timeout 200 "$BUILD/gpu_bench" bench/training_shapes.txt \
    --configs "1x128 x 128x128 own,1x128 blocks own,fp8 promoted own" \
    --csv "$OUT/own-training.csv" > "$OUT/own-training.md" 2>&1
  echo "training shapes bench rc=$?"
fi
if [[ "${SKIP_SANITIZER:-0}" != 1 ]]; then
  echo "== compute-sanitizer memcheck over the own GEMM tests"
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$BUILD/tests/cuda/cuda_test" \
    --gtest_filter="${SANITIZER_FILTER:-${OWN_TEST_FILTER:-CudaOwnGemm*}}" \
    > "$OUT/own-sanitizer.log" 2>&1
  echo "compute-sanitizer rc=$?"; tail -3 "$OUT/own-sanitizer.log"
fi
echo "== summary"
cut -d'|' -f2-6,14 "$OUT/own-deepgemm.md" | grep -v "^-" | head -40
[[ -f "$OUT/own-suite.md" ]] && cut -d'|' -f2-6,14 "$OUT/own-suite.md" | head -20
[[ -f "$OUT/own-training.md" ]] && cut -d'|' -f2-6,14 "$OUT/own-training.md" | grep own | head -40
