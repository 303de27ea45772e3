#!/usr/bin/env bash
# Why autotuning did not speed up the MLP block (calls 2-3): each kernel's time per step in the
# block (torch.profiler), plans untuned and autotuned, two processes each, alternating.
# Carry ["build/carry", "build/wheel-cp312"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session39/call6/run.sh".
set -u
source scripts/gpu-call-setup.sh
OUT=$O source scripts/gpu-python-env.sh > /dev/null
for round in 1 2; do
  for tune in 0 8; do
    FP8DOT_AUTOTUNE=$tune timeout 120 python3 bench/python/mlp_block_bench.py --gelu tanh \
      --rounds 3 --variants fp8dot-delayed --profile > $O/profile-r$round-tune$tune.log 2>&1
    echo "round $round tune $tune rc=$?: $(grep -E '^fp8dot-delayed' $O/profile-r$round-tune$tune.log)"
  done
done
for tune in 0 8; do echo "== tune $tune"; sed -n '/== profile/,$p' $O/profile-r2-tune$tune.log | cut -c1-150 | head -18; done
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
