#!/usr/bin/env bash
# Session 29, call 1: outer scales (tensor/row) fetched by cp.async when a tile starts instead of
# read from global memory in its epilogue. The own-kernel GPU tests (with the new several-tiles-
# per-CTA test), compute-sanitizer on the outer-scale tests, then gpu_bench at e971c9e (before)
# and the change (after), alternating: the suite promoted against cuBLASLt fast, and the
# training GEMMs.
#   carry: build/carry (cuda_test, gpu_bench, before/gpu_bench, libfp8dot_c.so), build/wheel-cp312
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/gpu.txt
OUT=$O source scripts/gpu-python-env.sh >/dev/null
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
echo "== cuda_test CudaOwnGemmTest.*"; t0=$SECONDS
timeout 150 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.*' > $O/own-tests.log 2>&1
echo "own tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/own-tests.log | tail -8
echo "== compute-sanitizer memcheck: outer scales"; t0=$SECONDS
timeout 100 compute-sanitizer --tool memcheck --print-limit 20 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.OuterScales*' > $O/memcheck.log 2>&1
echo "memcheck rc=$? ($((SECONDS - t0)) s)"
grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -4
echo "== before (e971c9e) / after: suite"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=3 OUT=$O/suite CONFIGS="fp8 promoted own vs fast" \
  scripts/gpu-before-after.sh bench/shapes.txt > $O/suite.log 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"
echo "== before / after: training GEMMs"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/training CONFIGS="fp8 promoted own vs fast" \
  scripts/gpu-before-after.sh bench/training_shapes.txt > $O/training.log 2>&1
echo "training rc=$? ($((SECONDS - t0)) s)"
tar czf $O/csv.tgz -C $O suite training && rm -rf $O/suite $O/training
grep -E "^\| [0-9]|loop after" $O/suite.log $O/training.log | cut -d'|' -f2-7
