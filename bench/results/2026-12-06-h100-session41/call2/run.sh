#!/usr/bin/env bash
# One device call (about 4 minutes): the own kernel's tile choice with the GPU's DRAM in its cost
# model (after) against the commit before it (before), on DeepGEMM's M <= 128 shapes, the plan's
# own tile for tensor scales promoted every 128 and for A 1x128 x B 128x128, alternating builds,
# 2 rounds; and the GPU tests of the change (the driver's DRAM figures, Explain's line).
# Build here: ninja -C build-gpu gpu_bench cuda_test (after) with the before binaries in
# build/before, then
#   tar cJf build/carry/carry.tar.xz build/gpu_bench build/tests/cuda/cuda_test build/before
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-06-dram-aware-tile-choice/run.sh".
set -u
cd "$(dirname "$0")/../../.."
here=bench/pending/2026-12-06-dram-aware-tile-choice
O=$OUT/o && mkdir -p $O && nvidia-smi > $O/gpu.txt
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 120 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.PlansName*:CudaOwnGemmTest.*FewerSms*:CudaOwnGemmTest.*Split*' \
  > $O/tests.log 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED" $O/tests.log | tail -6
tar czf $OUT/logs-1-tests.tgz -C $O .
t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/ba \
  CONFIGS="fp8 promoted own vs fast,1x128 x 128x128 own" \
  timeout 400 bash scripts/gpu-before-after.sh $here/shapes.txt > $O/before-after.log 2>&1
echo "before-after rc=$? ($((SECONDS - t0)) s)"
head -1 $O/ba/after-1.log
tail -1 $O/ba/before-after.md
tar czf $OUT/logs-2-before-after.tgz -C $O ba before-after.log
