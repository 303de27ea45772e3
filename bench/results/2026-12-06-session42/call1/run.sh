#!/usr/bin/env bash
# Call 1 of session 42: the own kernel's and the plans' GPU tests at HEAD (64473f5: the new
# assertion in AutotuningTheOwnEngineRacesItsTiles; RunsBackToBack at M = 128), then
# bench/pending/2026-12-06-dependent-launch-modes (2 rounds).
# Build: bench/pending/build.sh bench/results/2026-12-06-session42/call1/change.diff
# Carry ["build/carry"]; command "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-session42/call1/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
t0=$SECONDS
timeout 200 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*' > $O/head-tests.log 2>&1
echo "head tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/head-tests.log | tail -8
cp $O/gpu.txt $OUT/gpu.txt
OUT=$O ROUNDS="1 2" bash bench/results/2026-12-06-session42/call1/modes-run.sh
cp $O/o/summary.md $OUT/pdl-summary.md 2>/dev/null
tar czf $OUT/call1.tgz -C $O .
