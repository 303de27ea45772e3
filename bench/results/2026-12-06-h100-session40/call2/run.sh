#!/usr/bin/env bash
# Split-K's last run without the wait (the diff of this call's commit): a run that finds every
# other run of its tile counted in adds the runs at once, its own sums from registers, without
# storing them and releasing them first. The own-kernel tests, then before/after (binaries of
# 569a1f2 and with the change) alternating, 2 rounds, on small-M shapes with split tiles forced
# (128x128s2 keeps the old path: a control).
# Carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session40/call2/run.sh".
set -u
O=$OUT/o && mkdir -p $O && nvidia-smi > $O/gpu.txt
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
source bench/pending/own-gemm-checks.sh
own_gemm_tests 240
timeout 120 build/tests/cuda/cuda_test --gtest_filter='CudaDotPrecisionTest.EmulationWithThePlansSplitKIsBitIdentical' > $O/precision-split.log 2>&1
echo "precision split rc=$?"; grep -E "identical|PASSED|FAILED" $O/precision-split.log | tail -6
D=bench/results/2026-12-06-h100-session40/call2
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/ba \
  CONFIGS="fp8 promoted own vs fast,1x128 x 128x128 own" \
  GPU_BENCH_ARGS="--own-tiles 64x32s2,64x64s2,128x64s2,64x64s4,128x128s2" \
  bash scripts/gpu-before-after.sh $D/shapes.txt > $O/before-after.log 2>&1
echo "before-after rc=$?"
tail -4 $O/ba/before-after.md
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
