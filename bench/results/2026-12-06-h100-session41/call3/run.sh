#!/usr/bin/env bash
# One device call (about 6 minutes): the own GEMM launched as a programmatic dependent (it waits
# for the kernel before it in the stream after its set-up; the next may start as its CTAs
# finish) against 58b5377 (before), alternating, 2 rounds: tensor scales promoted every 128 on
# the suite and DeepGEMM's small-M shapes, A 1x128 x B 128x128 on the small-M ones; and the own
# kernel's GPU tests with the change (the new back-to-back test among them).
# Build here: before = 58b5377's gpu_bench in build/before; after = ninja -C build-gpu gpu_bench
# cuda_test, copied to build/; tar cJf build/carry/carry.tar.xz build/gpu_bench
# build/tests/cuda/cuda_test build/before. Carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-06-dependent-launch/run.sh".
set -u
cd "$(dirname "$0")/../../.."
here=bench/pending/2026-12-06-dependent-launch
O=$OUT/o && mkdir -p $O && nvidia-smi > $O/gpu.txt
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*:CudaDotPrecisionTest.*:CudaScaleLayoutTest.*' \
  > $O/tests.log 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED|tests ran" $O/tests.log | tail -8
tar czf $OUT/logs-1-tests.tgz -C $O tests.log gpu.txt
t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/promoted CONFIGS="fp8 promoted own vs fast" \
  timeout 240 bash scripts/gpu-before-after.sh $here/shapes.txt > $O/promoted.log 2>&1
echo "promoted rc=$? ($((SECONDS - t0)) s)"; tail -1 $O/promoted/before-after.md
tar czf $OUT/logs-2-promoted.tgz -C $O promoted promoted.log
t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/blocks CONFIGS="1x128 x 128x128 own" \
  timeout 120 bash scripts/gpu-before-after.sh $here/small-shapes.txt > $O/blocks.log 2>&1
echo "blocks rc=$? ($((SECONDS - t0)) s)"; tail -1 $O/blocks/before-after.md
tar czf $OUT/logs-3-blocks.tgz -C $O blocks blocks.log
