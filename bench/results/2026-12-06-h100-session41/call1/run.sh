#!/usr/bin/env bash
# One device call (about 7 minutes; 5 with BLOCK_TILES= (empty), which leaves out the
# block-scaled sweep): split-K's stores issued while thread 0 asks the tile's count (change.diff,
# on 8b29814). The committed kernel's tests (the own kernel's, and those of 8b29814's SM count
# target, which no GPU has run yet), the change's split-K tests; before/after (8b29814 against
# the change) alternating, 2 rounds, split tiles forced on the shapes where 52d712e lost
# (N = 2112) and where it gained; the plan's own tile against cuBLASLt on the small-M shapes;
# then the small-M tile sweep (../2026-12-05-small-m-promoted-sweep) on 8b29814 for the cost
# model's refit. Each step's logs come back in a tarball of their own.
# Build: BEFORE=1 bench/pending/build.sh bench/pending/2026-12-06-split-k-stores-while-asking/change.diff
# Carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-06-split-k-stores-while-asking/run.sh".
set -u
cd "$(dirname "$0")/../../.."
here=bench/pending/2026-12-06-split-k-stores-while-asking
O=$OUT/o && mkdir -p $O && nvidia-smi > $O/gpu.txt
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The committed kernel's tests (build/before), then the change's split-K ones.
timeout 150 build/before/cuda_test \
  --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.SmCountTarget*' > $O/head-tests.log 2>&1
echo "head tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|^\[  FAILED" $O/head-tests.log | tail -6
timeout 100 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.*Split*:CudaOwnGemmTest.*FewerSms*:CudaOwnGemmTest.LongK*' \
  > $O/change-tests.log 2>&1
echo "change tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|^\[  FAILED" $O/change-tests.log | tail -6
tar czf $OUT/logs-1-tests.tgz -C $O .
t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/ba \
  CONFIGS="fp8 promoted own vs fast,1x128 x 128x128 own" \
  GPU_BENCH_ARGS="--own-tiles 64x32s2,64x64s2,64x64s4" \
  timeout 150 bash scripts/gpu-before-after.sh $here/shapes.txt > $O/before-after.log 2>&1
echo "before-after rc=$? ($((SECONDS - t0)) s)"
tail -1 $O/ba/before-after.md
tar czf $OUT/logs-2-before-after.tgz -C $O ba before-after.log
t0=$SECONDS
timeout 60 build/before/gpu_bench bench/pending/2026-12-05-small-m-promoted-sweep/block-shapes.txt \
  --configs "fp8 promoted own vs fast,1x128 x 128x128 own" --csv $O/plan.csv > $O/plan.log 2>&1
echo "plan rc=$? ($((SECONDS - t0)) s)"
tar czf $OUT/logs-3-plan.tgz -C $O plan.csv plan.log
GPU_BENCH=build/before/gpu_bench \
  TILES=128x64,128x64s2,128x32,128x128,128x128s2,64x64,64x64s2,64x64s4,64x32,64x32s2,64x128,64x128s2 \
  BLOCK_TILES=${BLOCK_TILES-64x32,64x32s2,64x64,64x64s2,64x64s4,64x128,64x128s2,128x64,128x64s2,128x128,128x128s2} \
  OUT=$O/sweep timeout 200 bash bench/pending/2026-12-05-small-m-promoted-sweep/run.sh
tar czf $OUT/logs-4-sweep.tgz -C $O sweep && rm -rf $O
