#!/usr/bin/env bash
# Session 49, call 1 (one device call, ~6 min): at bfd8700,
#  1. bench/pending/2026-12-07-m4096-block-pairs (m4096-shapes.txt here): A 1x128 x B 128x128 on DeepGEMM's five M = 4096
#     shapes whose N pairs up, 192x128 / 256x128 / 256x128c2 forced, two rounds against cuBLASLt;
#  2. Nsight Compute on DeepGEMM's kernel and the own one at 128x4096x7168, where both run a 64x64
#     tile with 13 stages and DeepGEMM was 15% faster (session 48): warp stalls per SASS line
#     (scripts/gpu-deepgemm-peer.sh, NCU=1, the peer comparison skipped).
# Carry ["build/carry", "build/wheel-cp312", "build-tools"] (build/carry/carry.tar.xz holds
# build/before/gpu_bench); command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session49/call1/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
for round in 1 2; do
  t0=$SECONDS
  timeout 100 build/before/gpu_bench bench/results/2026-12-07-session49/call1/m4096-shapes.txt --configs "1x128 x 128x128 own" \
    --own-tiles 192x128,256x128,256x128c2 --csv $O/tiles-$round.csv > $O/tiles-$round.log 2>&1
  echo "round $round rc=$? ($((SECONDS - t0)) s)"
done
mkdir -p $O/ncu
t0=$SECONDS
SKIP_PEER=1 SKIP_GPU_BENCH=1 NCU=1 NCU_SHAPE="128 4096 7168" \
  NCU_KERNELS="sm90_fp8_gemm_1d2d_impl block_scaled_gemm_kernel" STALL_LINES=30 OUT=$O/ncu \
  timeout 400 bash scripts/gpu-deepgemm-peer.sh > $O/ncu.log 2>&1
echo "ncu rc=$? ($((SECONDS - t0)) s)"
echo "== M,N,K | tile | own/cuBLASLt"
grep -h '^| [0-9]' $O/tiles-1.log $O/tiles-2.log | awk -F'|' '{print $2 "|" $3 "|" $6}' | sort
tail -80 $O/ncu.log
cp $O/gpu.txt $OUT/
tar czf $OUT/call1.tgz -C $O .
