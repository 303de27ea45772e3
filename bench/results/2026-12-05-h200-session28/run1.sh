#!/usr/bin/env bash
# Session 28, call 1: the GPU tests of session 27's unrun kernel changes (B 1x128 column scales
# by LDS.64, c54016f; D staged by STS, 73b2ffe) and of the FFI handler's plain row-major buffers
# (583382d), then their speed: gpu_bench at 13400a2 (before) and HEAD (after), alternating.
#   carry: build (tests/cuda/cuda_test, gpu_bench, before/gpu_bench, wheel-cp312)
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/gpu.txt
OUT=$O source scripts/gpu-python-env.sh >/dev/null
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
echo "== cuda_test (all)"; t0=$SECONDS
timeout 240 build/tests/cuda/cuda_test > $O/cuda-tests.log 2>&1; echo "cuda_test rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/cuda-tests.log | tail -8
echo "== compute-sanitizer memcheck: every own tile, column scales"; t0=$SECONDS
timeout 130 compute-sanitizer --tool memcheck --print-limit 20 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.EveryTileIsBitIdenticalToTheEmulation:CudaOwnGemmTest.ColumnScales*' \
  > $O/memcheck.log 2>&1; echo "memcheck rc=$? ($((SECONDS - t0)) s)"
grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -4
echo "== pytest test_jax.py (GPU)"; t0=$SECONDS
timeout 120 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_jax.py \
  -W ignore::DeprecationWarning > $O/pytest-jax.log 2>&1; echo "pytest rc=$? ($((SECONDS - t0)) s)"
grep -E "passed|failed|^FAILED|^ERROR" $O/pytest-jax.log | tail -6
echo "== before (13400a2) / after (HEAD): training GEMMs"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/ba \
  CONFIGS="1x128 blocks own,1x128 x 128x128 own,fp8 promoted own vs fast" \
  scripts/gpu-before-after.sh bench/training_shapes.txt > $O/before-after.log 2>&1
echo "before-after rc=$? ($((SECONDS - t0)) s)"
tar czf $O/ba.tgz -C $O ba && rm -rf $O/ba
grep -E "^\| [0-9]|loop after" $O/before-after.log | cut -d'|' -f2-6
