#!/usr/bin/env bash
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
LD_LIBRARY_PATH=$PWD/build timeout 150 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemm*:CudaScaleLayout*' > $O/own-tests.log 2>&1; echo "tests rc=$?"; grep -E "PASSED|FAILED" $O/own-tests.log | tail -5
timeout 100 build/ab/cur/gpu_bench build/ab/mlp.txt --configs "1x128 x 128x128 row-major,1x128 x 128x128 own" --csv $O/mlp-gemms.csv > $O/mlp-gemms.log 2>&1; echo "gemms rc=$?"
grep -E "^\| [0-9]" $O/mlp-gemms.log | cut -d'|' -f1-6
OUT=$O source scripts/gpu-python-env.sh
unset FP8DOT_EXPECT_NATIVE_TORCH_OPS
timeout 280 python3 bench/python/jax_bench.py --part mlp --rounds 5 \
  --variants "bf16,flax-fp8 (XLA),fp8dot-blocks-kernel,fp8dot-blocks" > $O/jax-mlp.log 2>&1; echo "jax mlp rc=$?"
tail -6 $O/jax-mlp.log
tar czf $OUT/r26g.tgz -C /tmp o
