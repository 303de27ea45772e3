#!/usr/bin/env bash
# Session 29, call 5: the torch MLP block (8192 x 4096 -> 16384 -> 4096, GELU, fwd+bwd,
# torch.compile) with DeepSeek blocks before (wheel of 02:38 on 2026-12-05, before 2ab33b9: the
# wgrads' B 1x128 GEMMs on cuBLASLt) and after (this session's wheel: kAuto takes the own
# 192x128 kernel for them), one process each, bf16 beside it in each.
#   carry: build/wheel-cp312, build/wheel-before
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
BEFORE_WHEEL=build/wheel-before ROUNDS=1 OUT=$O timeout 400 scripts/gpu-python-before-after.sh mlp \
  python3 bench/python/mlp_block_bench.py --variants bf16,fp8dot-blocks --rounds 5
grep -h "^|" $O/mlp-*.log | sort | uniq -c | sort -rn | head -3
for f in $O/mlp-*.log; do echo "== $f"; grep -E "^\| (bf16|fp8dot-blocks)" $f; done
