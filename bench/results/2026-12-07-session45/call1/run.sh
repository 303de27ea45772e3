#!/usr/bin/env bash
# Call 1 of session 45 (no change to the library; gpu_bench at af7e244, the large-tile rule of
# 2815e58 included): #15's promoted count on the whole suite with the plan's own tile choice
# (tensor scales promoted every 128 against cuBLASLt's fast GEMM, and A 1x128 x B 128x128
# against cuBLASLt's; interleaved, 2 rounds), then the small-M sweep's block-scaled half
# (bench/pending/2026-12-05-small-m-promoted-sweep: the plan's tile, then each forced).
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session45/call1/run.sh"
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
sweep=bench/pending/2026-12-05-small-m-promoted-sweep
for round in 1 2; do
  t0=$SECONDS
  timeout 150 build/gpu_bench bench/shapes.txt --configs "fp8 promoted own vs fast,1x128 x 128x128 own" \
    --csv $O/suite-$round.csv > $O/suite-$round.log 2>&1
  echo "suite round $round rc=$? ($((SECONDS - t0)) s)"
done
t0=$SECONDS
timeout 120 build/gpu_bench $sweep/block-shapes.txt --configs "1x128 x 128x128 own" \
  --csv $O/block-plan.csv > $O/block-plan.log 2>&1
echo "block plan rc=$? ($((SECONDS - t0)) s)"
left=$((570 - SECONDS))
if ((left > 30)); then
  t0=$SECONDS
  timeout $left build/gpu_bench $sweep/block-shapes.txt --configs "1x128 x 128x128 own" \
    --own-tiles 128x64,128x64s2,128x64s4,128x128,128x128s2,64x64,64x64s2,64x64s4,64x128,64x128s2,64x32s2,128x32s2 \
    --csv $O/block-tiles.csv > $O/block-tiles.log 2>&1
  echo "block tiles rc=$? ($((SECONDS - t0)) s)"
fi
for round in 1 2; do
  echo "== suite round $round: M,N,K | config | own/cuBLASLt (loop, graph)"
  grep '^| [0-9]' $O/suite-$round.log | awk -F'|' '{print $2 "|" $3 "|" $6 "|" $9 "|" $14}' | head -40
done
cp $O/gpu.txt $OUT/
tar czf $OUT/call1.tgz -C $O .
