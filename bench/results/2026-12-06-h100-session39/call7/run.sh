#!/usr/bin/env bash
# Call 6 found the autotuned block faster in a profiled burst (GEMMs 4.46 against 4.62 ms a
# step) and slower in the timed loop: the SM clock and power while each times (nvidia-smi every
# 20 ms), untuned and autotuned alternating, two processes each.
# Carry ["build/carry", "build/wheel-cp312"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session39/call7/run.sh".
set -u
source scripts/gpu-call-setup.sh
OUT=$O source scripts/gpu-python-env.sh > /dev/null
for round in 1 2; do
  for tune in 8 0; do
    FP8DOT_AUTOTUNE=$tune timeout 120 python3 bench/python/mlp_block_bench.py --gelu tanh \
      --rounds 5 --variants fp8dot-delayed --clock-log $O/clocks-r$round-tune$tune.csv \
      > $O/clock-r$round-tune$tune.log 2>&1
    echo "round $round tune $tune rc=$?"; grep -v Warning $O/clock-r$round-tune$tune.log | tail -3
  done
done
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
