#!/usr/bin/env bash
# Session 27, call 3: where the JAX MLP block's wall time goes beyond its kernels (GPU idle per
# step and the host's events), four variants; then the torch MLP block with DeepSeek blocks.
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
OUT=$O source scripts/gpu-python-env.sh >/dev/null
timeout 200 python3 bench/python/jax_profile.py --steps 5 \
  --variants "bf16,flax-fp8 (XLA),fp8dot-seed-kernel,fp8dot-blocks-kernel" --out /tmp/prof \
  > $O/jax-idle.log 2>&1; echo "profile rc=$?"
grep -E "^== |GPU span|idle .* us/step" $O/jax-idle.log | cut -c1-200
timeout 220 python3 bench/python/mlp_block_bench.py --rounds 3 --variants "bf16,fp8dot-seed,fp8dot-blocks" \
  > $O/torch-mlp.log 2>&1; echo "torch mlp rc=$?"
tail -6 $O/torch-mlp.log
