#!/usr/bin/env bash
# The part of bench/pending/2026-12-06-split-k-stores-while-asking/run.sh that 320 s of device
# time allowed: the committed kernel's tests (8b29814: own kernel, SM count target), the
# change's split-K tests, and a short before/after (8b29814 against the change; promoted, two
# split tiles, three shapes, 2 rounds). Binaries: BEFORE=1 bench/pending/build.sh <its diff>.
# Carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session40/call3/run.sh".
set -u
O=$OUT/o && mkdir -p $O && nvidia-smi > $O/gpu.txt
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$SECONDS
timeout 120 build/before/cuda_test \
  --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.SmCountTarget*' > $O/head-tests.log 2>&1
echo "head tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|^\[  FAILED" $O/head-tests.log | tail -6
t0=$SECONDS
timeout 60 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.*Split*:CudaOwnGemmTest.*FewerSms*' > $O/change-tests.log 2>&1
echo "change tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|^\[  FAILED" $O/change-tests.log | tail -6
tar czf $OUT/logs-1-tests.tgz -C $O .
t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/ba CONFIGS="fp8 promoted own vs fast" \
  GPU_BENCH_ARGS="--own-tiles 64x32s2,64x64s4" \
  timeout 70 bash scripts/gpu-before-after.sh bench/results/2026-12-06-h100-session40/call3/shapes.txt \
  > $O/before-after.log 2>&1
echo "before-after rc=$? ($((SECONDS - t0)) s)"
grep -E "^\| [0-9]" $O/ba/before-after.md
tar czf $OUT/logs-2-before-after.tgz -C $O ba before-after.log
