#!/usr/bin/env bash
# Session 48, call 3 (one device call, ~8 min): at 1e0a59d (the H100 block-scale pairing at 2^39
# with N >= 2M),
#  1. the own GEMM's and the plan's GPU tests;
#  2. the plan on the weight-gradient / MLP-block shapes, A 1x128 x B 128x128 against cuBLASLt,
#     two interleaved rounds (the two wide-N shapes now 256x128c2);
#  3. the tensor-map cache (tensor_map_cache.h): before (1e0a59d) / after, alternating, three
#     rounds, A 1x128 x B 128x128 on the own engine at GEMMs small enough for a loop of calls to
#     be bound by host time (tiny-shapes.txt), then the after build's own GEMM tests (the new
#     same-buffers test among them);
#  4. DeepGEMM 2.6.1 (54e2261) beside the own engine and cuBLASLt on DeepGEMM's 18 shapes, one
#     process, CUDA graphs (scripts/gpu-deepgemm-peer.sh; #15: at or above DeepGEMM on every
#     shape, last measured in session 29 on an H200: 3 of 18).
# build/carry/carry.tar.xz holds build/before (gpu_bench, cuda_test at 1e0a59d),
# build/libfp8dot_c.so and build/after (gpu_bench, cuda_test, libfp8dot_c.so with the cache).
# Carry ["build/carry", "build/wheel-cp312", "build-tools"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session48/call3/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
here=bench/results/2026-12-07-session48/call3
t0=$SECONDS
timeout 120 build/before/cuda_test --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*' > $O/tests.log 2>&1
echo "tests rc=$? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED) \]" $O/tests.log | tail -4
for round in 1 2; do
  t0=$SECONDS
  timeout 90 build/before/gpu_bench bench/pending/2026-12-07-targets-on-an-h200/wgrad-shapes.txt \
    --configs "1x128 x 128x128 own" --csv $O/plan-$round.csv > $O/plan-$round.log 2>&1
  echo "plan round $round rc=$? ($((SECONDS - t0)) s)"
done
for round in 1 2 3; do
  for side in before after; do
    timeout 40 build/$side/gpu_bench $here/tiny-shapes.txt --configs "1x128 x 128x128 own" \
      --csv $O/host-$side-$round.csv > $O/host-$side-$round.log 2>&1 || echo "host $side $round rc=$?"
  done
done
t0=$SECONDS
LD_LIBRARY_PATH=$PWD/build/after:$LD_LIBRARY_PATH timeout 120 build/after/cuda_test \
  --gtest_filter='CudaOwnGemmTest.*' > $O/tests-after.log 2>&1
echo "tests after rc=$? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED) \]" $O/tests-after.log | tail -4
cp build/before/gpu_bench build/gpu_bench
mkdir -p $O/peer
t0=$SECONDS
SKIP_GPU_BENCH=1 OUT=$O/peer timeout $((${DEADLINE:-580} - SECONDS)) bash scripts/gpu-deepgemm-peer.sh > $O/peer.log 2>&1
echo "peer rc=$? ($((SECONDS - t0)) s)"
echo "== plan: M,N,K | own/cuBLASLt | tile"
grep -h '^| [0-9]' $O/plan-1.log $O/plan-2.log | awk -F'|' '{print $2 "|" $6 "|" $14}'
echo "== host: M,N,K | side-round | fp8dot loop TFLOP/s | graph"
for f in $O/host-*.log; do
  grep -h '^| [0-9]' $f | awk -F'|' -v f=$(basename $f .log) '{print $2 "|" f "|" $4 "|" $7}'
done
tail -50 $O/peer.log
cp $O/gpu.txt $OUT/
tar czf $OUT/call3.tgz -C $O .
