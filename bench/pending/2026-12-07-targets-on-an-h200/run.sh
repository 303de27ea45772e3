#!/usr/bin/env bash
# One device call (about 7 minutes; no change to the library): #15's targets measured with the
# plan as it is since session 46, on the GPU at hand (the targets are stated for an H200, which
# sessions 45 and 46 did not get).
#  1. the own GEMM's and the plan's GPU tests;
#  2. the suite, two interleaved rounds: tensor scales promoted every 128 against cuBLASLt's
#     fast GEMM (#15's count: >= 1.0x on 8 of 13; 7 of 13 on the H100 of session 45) and
#     A 1x128 x B 128x128 against cuBLASLt's;
#  3. DeepGEMM's 18 shapes, block-scaled, against cuBLASLt (CUDA graphs at M <= 128): #15's
#     >= 1.3x at M <= 128 (4 of 12 last measured on an H200) and >= 1.1x at M = 4096 (4 of 6);
#  4. B 1x128 (the weight gradients) and the MLP block's block-scaled GEMMs with 192x128 (the
#     plan's), 256x128 and 256x128c2 forced: whether pairs sharing A pay on the gradients too,
#     as they do for A 1x128 x B 128x128 on the H100's largest GEMMs (session 46).
# Build here: cmake -S . -B build-gpu -G Ninja -DFP8DOT_CUDA=ON && ninja -C build-gpu gpu_bench
#   cuda_test && mkdir -p build/before build/carry && cp build-gpu/gpu_bench
#   build-gpu/tests/cuda/cuda_test build/before/ && cp build-gpu/libfp8dot_c.so build/ &&
#   tar cJf build/carry/carry.tar.xz build/before build/libfp8dot_c.so
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-targets-on-an-h200/run.sh"
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
here=bench/pending/2026-12-07-targets-on-an-h200
t0=$SECONDS
timeout 150 build/before/cuda_test --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*' > $O/tests.log 2>&1
echo "tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/tests.log | tail -8
bench() {  # label, timeout, gpu_bench arguments
  local label=$1 limit=$2; shift 2
  ((limit > 560 - SECONDS)) && limit=$((560 - SECONDS))
  ((limit > 20)) || { echo "$label skipped (no time left)"; return; }
  t0=$SECONDS
  timeout $limit build/before/gpu_bench "$@" --csv $O/$label.csv > $O/$label.log 2>&1
  echo "$label rc=$? ($((SECONDS - t0)) s)"
}
bench suite-1 120 bench/shapes.txt --configs "fp8 promoted own vs fast,1x128 x 128x128 own"
bench deepgemm 120 bench/deepgemm_shapes.txt --configs "1x128 x 128x128 own"
bench suite-2 120 bench/shapes.txt --configs "fp8 promoted own vs fast,1x128 x 128x128 own"
bench gradient-tiles 110 $here/wgrad-shapes.txt --configs "1x128 blocks own,1x128 x 128x128 own" \
  --own-tiles 192x128,256x128,256x128c2
for label in suite-1 suite-2 deepgemm gradient-tiles; do
  echo "== $label: M,N,K | config | own/cuBLASLt (loop) | (graph) | note"
  grep '^| [0-9]' $O/$label.log 2>/dev/null | awk -F'|' '{print $2 "|" $3 "|" $6 "|" $9 "|" $14}'
done
cp $O/gpu.txt $OUT/
tar czf $OUT/targets.tgz -C $O .
