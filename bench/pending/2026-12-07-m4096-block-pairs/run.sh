#!/usr/bin/env bash
# One device call (~2 min; no change to the library): A 1x128 x B 128x128 on DeepGEMM's M = 4096
# shapes with the large tiles forced (192x128, 256x128, 256x128c2), two rounds against cuBLASLt
# (the plan's picks are among them): whether pairs sharing A
# pay there on an H100, as DeepGEMM's choice of 256x128 in pairs suggests (the plan pairs block
# scales on the H100 only from 2^39-2^40 of work). On the H100 of 2026-12-07 (session 48) the
# plan's tiles ran 0.906-0.964x DeepGEMM there and 0.992-1.040x cuBLASLt on the two shapes that
# miss #15's 1.1x (4096x7168x16384, 4096x4096x7168). Worth a rule when 256x128c2 wins by > 3%
# on a shape in both rounds; the H200 needs its own run (192x128 led there in session 44).
# Build here: ninja -C build-gpu gpu_bench && mkdir -p build/before build/carry &&
#   cp build-gpu/gpu_bench build/before/ && tar cJf build/carry/carry.tar.xz build/before
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-m4096-block-pairs/run.sh"
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
here=bench/pending/2026-12-07-m4096-block-pairs
for round in 1 2; do
  t0=$SECONDS
  timeout 100 build/before/gpu_bench $here/m4096-shapes.txt --configs "1x128 x 128x128 own" \
    --own-tiles 192x128,256x128,256x128c2 --csv $O/tiles-$round.csv > $O/tiles-$round.log 2>&1
  echo "round $round rc=$? ($((SECONDS - t0)) s)"
done
echo "== M,N,K | tile | own/cuBLASLt"
grep -h '^| [0-9]' $O/tiles-1.log $O/tiles-2.log | awk -F'|' '{print $2 "|" $3 "|" $6}' | sort
cp $O/gpu.txt $OUT/
tar czf $OUT/call5.tgz -C $O .
