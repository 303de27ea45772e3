#!/usr/bin/env bash
# Session 28, call 4: the final C++ (kAuto takes the own kernel for B 1x128 wherever the plan takes
# 192x128 at M >= 2048, K >= 2048): the training GEMMs with "1x128 blocks" (auto) against cuBLASLt
# called directly, then cuda_test whole.
#   carry: build/carry (tar: cuda_test, libfp8dot_c.so, gpu_bench), build/wheel-cp312 (OpenBLAS)
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
OUT=$O source scripts/gpu-python-env.sh >/dev/null
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
echo "== gpu_bench: 1x128 blocks (auto) on the training GEMMs"; t0=$SECONDS
timeout 60 build/gpu_bench bench/training_shapes.txt --configs "1x128 blocks" --csv $O/auto.csv \
  > $O/auto.log 2>&1; echo "gpu_bench rc=$? ($((SECONDS - t0)) s)"
grep -E "^\| [0-9]" $O/auto.log | cut -d'|' -f2-6,14
echo "== cuda_test (all)"; t0=$SECONDS
timeout 220 build/tests/cuda/cuda_test > $O/cuda-tests.log 2>&1; echo "cuda_test rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[ +(PASSED|FAILED) +\]|tests ran" $O/cuda-tests.log | tail -6
