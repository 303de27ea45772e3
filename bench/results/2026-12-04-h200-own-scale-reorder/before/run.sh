#!/usr/bin/env bash
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
timeout 150 build/ab/cur/gpu_bench build/ab/mlp.txt --configs "1x128 x 128x128,1x128 x 128x128 row-major,1x128 x 128x128 own,1x128 blocks,1x128 row-major" --csv $O/mlp-gemms.csv > $O/mlp-gemms.log 2>&1; echo "gemms rc=$?"
grep -E "^\|" $O/mlp-gemms.log | head -30
OUT=$O source scripts/gpu-python-env.sh
unset FP8DOT_EXPECT_NATIVE_TORCH_OPS
timeout 300 python3 bench/python/jax_profile.py --variants "fp8dot-blocks-kernel,fp8dot-blocks,fp8dot-seed-kernel" --out $O/prof > $O/jax-profile.log 2>&1; echo "profile rc=$?"
grep -v "^\s*$" $O/jax-profile.log | grep -v Warning | head -90
rm -rf $O/prof/trace-*
tar czf $OUT/r26f.tgz -C /tmp o
