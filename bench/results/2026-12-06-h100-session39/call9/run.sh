#!/usr/bin/env bash
# #10's 300M model (examples/train, h200-300m, 40 steps, torch.compile) on the wheel of 7faf285:
# fp8dot's seed rule with delayed scaling, plans autotuned (FP8DOT_AUTOTUNE=8) and untuned, with
# torchao's seed rule between them. Carry ["build/carry", "build/wheel-cp312"]; command
# "bash bench/results/2026-12-06-h100-session39/call9/run.sh".
set -u
source scripts/gpu-call-setup.sh
mkdir -p .whl && cp build/carry/torchao-*.whl .whl/
export STEPS=40
FP8DOT_AUTOTUNE=8 OUT=$O/tuned RUNS="fp8dot:delayed" timeout 170 bash scripts/gpu-train.sh
OUT=$O/peer RUNS="torchao:seed" timeout 170 bash scripts/gpu-train.sh
OUT=$O/untuned RUNS="fp8dot:delayed" timeout 170 bash scripts/gpu-train.sh
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
