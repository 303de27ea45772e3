#!/usr/bin/env bash
# One device call (at most 10 minutes) for when a single call is all the session gets: the
# decisive parts of two pending experiments, most important first.
#   carry: build/carry-all build/wheel-cp312 .whl (all.tar.xz: build/carry's binaries, and
#   build/head/tests, build/syncwarp, build/gelu's; the working tree and the carry must fit 64 MiB)
#   command: tar xJf build/carry-all/all.tar.xz && bash bench/pending/2026-12-05-combined-call.sh
# 1. racecheck of HEAD's block-scaled kernels (BlockScalesOfSeveralTilesPerCta*), then of the
#    wait-closes-body change (multi-warpgroup), then of the change + __syncwarp before a stage's
#    release (2026-12-05-wait-closes-body-multi-warpgroup/).
# 2. GELU inside the FP8 cast (2026-12-05-gelu-fused-cast/): the C++ bit-identity tests, the CUDA
#    pytest cases, issue #10's MLP block with GELU tanh, fused and not (3 rounds).
# 3. The wait change, promoted tensor scales on the suite, before/after (2 rounds).
set -u
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/out}
source scripts/gpu-call-setup.sh   # installs the carried wheel; LD_LIBRARY_PATH: build/
export LD_LIBRARY_PATH=$PWD/build/gelu:$LD_LIBRARY_PATH  # cuda_test's C API library (any build)
filter='CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*'
race() {  # name binary
  local t0=$SECONDS
  timeout 100 compute-sanitizer --tool racecheck --print-limit 20 "$2" --gtest_filter="$filter" \
    > "$O/racecheck-$1.log" 2>&1
  echo "racecheck $1 rc=$? ($((SECONDS - t0)) s): $(grep -E "RACECHECK SUMMARY" "$O/racecheck-$1.log" | tail -1)"
  grep -E "Race reported" "$O/racecheck-$1.log" | cut -c1-160 | head -4
}
race head build/head/tests/cuda/cuda_test
race change build/tests/cuda/cuda_test
race change-syncwarp build/syncwarp/tests/cuda/cuda_test
echo "== GELU: C++ CudaQuantize*"; t0=$SECONDS
timeout 150 build/gelu/tests/cuda/cuda_test --gtest_filter='CudaQuantize*' > "$O/cpp-quantize-tests.log" 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/cpp-quantize-tests.log" | tail -6
echo "== GELU: pytest (cuda cases)"; t0=$SECONDS
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_quantize.py \
  tests/python/test_torch_layers.py tests/python/test_jax.py -k "gelu or swiglu or activation" \
  -W ignore::DeprecationWarning > "$O/pytest-activations.log" 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; tail -1 "$O/pytest-activations.log"
echo "== MLP block, GELU tanh"; t0=$SECONDS
timeout 180 python3 bench/python/mlp_block_bench.py --gelu tanh --rounds 3 --variants \
  "bf16,torchao,fp8dot-delayed,fp8dot-delayed+fused" \
  > "$O/mlp-block-gelu-tanh.log" 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; tail -8 "$O/mlp-block-gelu-tanh.log"
echo "== the wait change: promoted, the suite"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/promoted CONFIGS="fp8 promoted own vs fast" \
  timeout 150 scripts/gpu-before-after.sh bench/shapes.txt > $O/promoted.log 2>&1
echo "promoted rc=$? ($((SECONDS - t0)) s)"
tar czf $O/csv.tgz -C $O promoted 2>/dev/null && rm -rf $O/promoted
grep -E "^\| [0-9]|loop after" $O/promoted.log | cut -d'|' -f2-7
