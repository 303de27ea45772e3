#!/usr/bin/env bash
# Call 1 of session 45 (cuda_test and gpu_bench at 440eec1: tensor scales promoted every block
# take 256x128c2 where they took 256x128 with K >= 4096 and N's tiles paired):
#  1. the own GEMM's and the plan's GPU tests;
#  2. #15's promoted count on the whole suite with the plan's tiles (tensor scales promoted every
#     128 against cuBLASLt's fast GEMM, and A 1x128 x B 128x128 against cuBLASLt's), interleaved,
#     two rounds, and the promoted half sustained (gpu_bench --sustain 2: each side alone at its
#     own clock under the power limit);
#  3. the small-M sweep's block-scaled half (bench/pending/2026-12-05-small-m-promoted-sweep:
#     the plan's tile, then each forced), in the time left.
# The binaries are build/before/{gpu_bench,cuda_test} of the carry that
#   BEFORE=1 bench/pending/build.sh bench/pending/2026-12-07-scales-freed-apart/change.diff
# packs (440eec1's library; the pending change is in build/ and not used here).
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session45/call1/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
sweep=bench/pending/2026-12-05-small-m-promoted-sweep
t0=$SECONDS
timeout 150 build/before/cuda_test --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*' > $O/tests.log 2>&1
echo "tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/tests.log | tail -8
suite() {  # round
  t0=$SECONDS
  timeout 120 build/before/gpu_bench bench/shapes.txt --configs "fp8 promoted own vs fast,1x128 x 128x128 own" \
    --csv $O/suite-$1.csv > $O/suite-$1.log 2>&1
  echo "suite round $1 rc=$? ($((SECONDS - t0)) s)"
}
suite 1
t0=$SECONDS
timeout 150 build/before/gpu_bench bench/shapes.txt --sustain 2 --configs "fp8 promoted own vs fast" \
  --csv $O/sustained.csv > $O/sustained.log 2>&1
echo "sustained rc=$? ($((SECONDS - t0)) s)"
suite 2
left=$((560 - SECONDS))
if ((left > 30)); then
  t0=$SECONDS
  timeout $left build/before/gpu_bench $sweep/block-shapes.txt --configs "1x128 x 128x128 own" \
    --own-tiles 128x64,128x64s2,128x64s4,128x128,128x128s2,64x64,64x64s2,64x64s4,64x128,64x128s2,64x32s2,128x32s2 \
    --csv $O/block-tiles.csv > $O/block-tiles.log 2>&1
  echo "block tiles rc=$? ($((SECONDS - t0)) s)"
fi
for round in 1 2; do
  echo "== suite round $round: M,N,K | config | own/cuBLASLt (loop) | (graph) | note"
  grep '^| [0-9]' $O/suite-$round.log | awk -F'|' '{print $2 "|" $3 "|" $6 "|" $9 "|" $14}'
done
echo "== sustained: M,N,K | config | own/cuBLASLt | per clock"
sed -n '/# Sustained/,$p' $O/sustained.log | grep '^| [0-9]' | awk -F'|' '{print $2 "|" $3 "|" $6 "|" $16}'
cp $O/gpu.txt $OUT/
tar czf $OUT/call1.tgz -C $O .
