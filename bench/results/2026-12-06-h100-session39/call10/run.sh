#!/usr/bin/env bash
# #10's 300M model (examples/train, h200-300m, 40 steps, torch.compile) on the wheel of 7faf285:
# a second pair, in the other order (untuned, then autotuned), of the seed rule with delayed
# scaling (the device budget left no room for torchao beside them). Carry ["build/carry", "build/wheel-cp312"]; command
# "bash bench/results/2026-12-06-h100-session39/call10/run.sh".
set -u
source scripts/gpu-call-setup.sh
export STEPS=40
OUT=$O/untuned RUNS="fp8dot:delayed" timeout 100 bash scripts/gpu-train.sh
FP8DOT_AUTOTUNE=8 OUT=$O/tuned RUNS="fp8dot:delayed" timeout 120 bash scripts/gpu-train.sh
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
