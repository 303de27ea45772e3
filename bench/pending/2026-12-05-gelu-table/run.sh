#!/usr/bin/env bash
# One device call (about 4 minutes): GELU of bf16 inputs by table in the staged cast
# (change.diff). Build here with the diff applied: `ninja -C build-gpu cuda_test fp8dot_c`, then
# `PYTHON312=... bash scripts/build-gpu-carry.sh` (the wheel), and pack
#   mkdir -p build/gt && cp build-gpu/tests/cuda/cuda_test build-gpu/libfp8dot_c.so build/gt/
#   carry: build/gt build/wheel-cp312 .whl
#   command: bash bench/pending/2026-12-05-gelu-table/run.sh
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
export LD_LIBRARY_PATH=$PWD/build/gt:$LD_LIBRARY_PATH
echo "== C++: GELU (and SwiGLU) casts against the CPU"; t0=$SECONDS
timeout 150 build/gt/cuda_test --gtest_filter='CudaQuantizeTest.Gelu*:CudaQuantizeTest.SwiGlu*' \
  > $O/cpp-activations.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; grep -E "^\[ +(OK|FAILED|PASSED) " $O/cpp-activations.log
echo "== the casts per step (JAX MLP block, DeepSeek blocks)"
timeout 90 python3 bench/python/jax_profile.py --out $O/jaxprof \
  --variants "fp8dot-blocks-kernel,fp8dot-blocks-kernel+fused" > $O/jax-profile.log 2>&1
rm -rf $O/jaxprof; grep -E "quantize_cast|fusion|of GPU kernels" $O/jax-profile.log | cut -c1-170
echo "== torch MLP block, GELU tanh"; t0=$SECONDS
timeout 120 python3 bench/python/mlp_block_bench.py --gelu tanh --rounds 3 --variants \
  "bf16,torchao,fp8dot-delayed,fp8dot-delayed+fused" > $O/mlp-block-gelu-tanh.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; tail -6 $O/mlp-block-gelu-tanh.log
echo "== JAX MLP block"; t0=$SECONDS
timeout 100 python3 bench/python/jax_bench.py --part mlp --rounds 3 --variants \
  "bf16,fp8dot-blocks-kernel,fp8dot-blocks-kernel+fused,fp8dot-seed-kernel,fp8dot-seed-kernel+fused" \
  > $O/jax-mlp.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; grep -E "^\| mlp" $O/jax-mlp.log | cut -d'|' -f3,5,7
