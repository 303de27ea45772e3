#!/usr/bin/env bash
# cuda_test (all), then the JAX MLP block with the package built at this commit (no torch ops).
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
LD_LIBRARY_PATH=$PWD/build timeout 240 build/tests/cuda/cuda_test > $O/cuda-tests.log 2>&1; echo "cuda_test rc=$?"; grep -E "PASSED|FAILED|tests ran" $O/cuda-tests.log | tail -5
OUT=$O source scripts/gpu-python-env.sh
unset FP8DOT_EXPECT_NATIVE_TORCH_OPS
python3 -c 'import jax, flax; print("jax", jax.__version__, "flax", flax.__version__)' > $O/versions.txt 2>&1
timeout 330 python3 bench/python/jax_bench.py --part mlp --rounds 5 \
  --variants "bf16,flax-fp8 (XLA),fp8dot-seed-kernel,fp8dot-blocks-kernel,fp8dot-blocks" > $O/jax-mlp.log 2>&1; echo "jax mlp rc=$?"
tail -9 $O/jax-mlp.log
tar czf $OUT/r26e.tgz -C /tmp o
