#!/usr/bin/env bash
# Call 2 of session 42: the dependent launch above M = 128 without the early start (the change),
# against 64473f5 (plain launch there). GPU tests of the change, then before/after alternating,
# 2 rounds, promoted tensor scales and A 1x128 x B 128x128, on shapes.txt; the GPU's clocks,
# power and throttle reasons sampled every 100 ms throughout (clocks.csv).
# Build: git diff > change.diff; git stash; BEFORE=1 bench/pending/build.sh change.diff; git stash pop
# Carry ["build/carry"]; command "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-session42/call2/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
here=bench/results/2026-12-06-session42/call2
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $O/clocks.csv 2>&1 &
sampler=$!
t0=$SECONDS
timeout 200 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*' > $O/tests.log 2>&1
echo "tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/tests.log | tail -8
BEFORE=build/before AFTER=build ROUNDS=2 CONFIGS="fp8 promoted own vs fast,1x128 x 128x128 own" \
  OUT=$O/ba bash scripts/gpu-before-after.sh $here/shapes.txt | tail -40
kill $sampler
cp $O/ba/before-after.md $OUT/ 2>/dev/null
tar czf $OUT/call2.tgz -C $O .
