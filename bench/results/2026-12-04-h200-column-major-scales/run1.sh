#!/usr/bin/env bash
# Session 27, call 1: the GPU tests of session 26's work (column-major 1x128 scales from the
# quantisation, the own GEMM reorder rule above 64 rows), then the blocks' speed.
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $O/gpu.txt
OUT=$O source scripts/gpu-python-env.sh >/dev/null
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
echo "== cuda_test (all)"
timeout 230 build/tests/cuda/cuda_test > $O/cuda-tests.log 2>&1; echo "cuda_test rc=$?"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/cuda-tests.log | tail -8
echo "== pytest (GPU variants)"
timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_quantize.py \
  tests/python/test_torch_layers.py tests/python/test_jax.py tests/python/test_scaled_dot.py \
  -W ignore::DeprecationWarning > $O/pytest.log 2>&1; echo "pytest rc=$?"
grep -E "passed|failed|^FAILED|^ERROR" $O/pytest.log | tail -8
echo "== own GEMM, M <= 128, row-major vs M-major scales"
head -14 bench/deepgemm_shapes.txt > /tmp/small.txt
timeout 60 build/gpu_bench /tmp/small.txt --configs "1x128 x 128x128 row-major,1x128 x 128x128 own" \
  --csv $O/small-m.csv > $O/small-m.log 2>&1; echo "small-m rc=$?"
grep -E "^\| [0-9]" $O/small-m.log | cut -d'|' -f1-7 | sed 's/  */ /g'
echo "== compute-sanitizer memcheck: the new quantisation and own-GEMM staging tests"
timeout 140 compute-sanitizer --tool memcheck --print-limit 20 build/tests/cuda/cuda_test \
  --gtest_filter='CudaQuantizeTest.ColumnMajor*:CudaOwnGemmTest.EveryTileIsBitIdenticalToTheEmulation' \
  > $O/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -4
