#!/usr/bin/env bash
# Session 52, call 3 (one device call, ~5 min; no change to the library, HEAD's kernel): where
# the own kernel's small-M time goes beside DeepGEMM's with the same tile. Session 49 found the
# own 64x64 tile 31% slower per K-block than DeepGEMM's at 128x4096x7168 (ncu, one launch); this
# separates a fixed cost (launch, pipeline fill, epilogue) from the steady K-loop rate by timing
# both at six lengths of K (k-sweep.txt: time = intercept + slope x K).
#  1. DeepGEMM 2.6.1, the own plan (the wheel) and cuBLASLt in one process, CUDA graphs
#     (scripts/gpu-deepgemm-peer.sh, its JIT log naming DeepGEMM's tile per shape);
#  2. gpu_bench, the own kernel's tiles forced (64x64, 64x32, 128x64), A 1x128 x B 128x128
#     against cuBLASLt, and tensor scales promoted against cuBLASLt's fast GEMM, CUDA graphs,
#     two rounds.
# Carry ["build/carry", "build/wheel-cp312", "build-tools"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session52/call3/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
here=bench/results/2026-12-07-session52/call3
mkdir -p $O/peer
t0=$SECONDS
SHAPES=$here/k-sweep.txt SKIP_GPU_BENCH=1 OUT=$O/peer timeout 330 bash scripts/gpu-deepgemm-peer.sh \
  > $O/peer.log 2>&1
echo "peer rc=$? ($((SECONDS - t0)) s)"
for round in 1 2; do
  t0=$SECONDS
  timeout 100 build/before/gpu_bench $here/k-sweep.txt \
    --configs "1x128 x 128x128 own,fp8 promoted own vs fast" --own-tiles 64x64,64x32,128x64 \
    --csv $O/tiles-$round.csv > $O/tiles-$round.log 2>&1
  echo "tiles round $round rc=$? ($((SECONDS - t0)) s)"
done
cp $O/gpu.txt $OUT/ 2>/dev/null
tar czf $OUT/call3.tgz -C $O .
grep -E "^\| " $O/peer/deepgemm-peer.md | head -16
sed -nE 's/.*m=([0-9]+), n=([0-9]+), k=([0-9]+),.*block_m=([0-9]+), block_n=([0-9]+),.*cluster_m=([0-9]+), cluster_n=([0-9]+)\).*num_stages=([0-9]+).*/DeepGEMM \1,\2,\3: \4x\5 cluster \6x\7, \8 stages/p' \
  $O/peer/deepgemm-jit.log | sort -t, -k3 -n
echo "== tiles round 1: M,N,K | config | own | direct | graph own | graph direct"
grep '^| [0-9]' $O/tiles-1.log | awk -F'|' '{print $2 "|" $3 "|" $7 "|" $8}'
