#!/usr/bin/env bash
# Call 1 of session 46 (cuda_test and gpu_bench at 00acd60, the tile rules of 440eec1/eb1dabb):
#  1. the own GEMM's and the plan's GPU tests (the autotune races among them), with the diff (build/after);
#  2. on an H200 only: #15's promoted count on the suite with the plan's 256x128c2 (tensor
#     scales promoted every 128 against cuBLASLt's fast GEMM), interleaved;
#  3. A 1x128 x B 128x128 on the large GEMMs: the plan's 192x128 against 256x128 and 256x128c2
#     forced, interleaved, then 192x128 and 256x128c2 sustained (each side alone at its own
#     clock): on session 45's H100 the plan ran 0.92-0.96x cuBLASLt there, on session 44's
#     H200 1.04-1.06x;
#  4. the autotune race with the large tiles as candidates (eb1dabb): "1x128 x 128x128 auto
#     tuned" and "fp8 promoted tuned vs fast" on the large GEMMs;
#  6. (if time is left) the JAX MLP block as issue #11 times it (bench/python/jax_bench.py, the
#     wheel at 166113a): bf16, Flax's FP8 path, fp8dot seed and DeepSeek blocks with GELU in
#     the cast; then 3's sustained half and 4.
#  5. 1000^3 against 1000x1000x1008 and 1008^3: what K's padding costs the own kernel; and
#     build/after/gpu_bench (after.diff: the padded copy's index arithmetic in 32 bits, and the operand gathers and scale reorders letting the own GEMM, their
#     programmatic dependent, start early) against build/before's, alternating, on those and on
#     row-major block scales (reordered on the device at every run).
# Build here: ninja -C build-gpu gpu_bench cuda_test && mkdir -p build/before build/carry &&
#   cp build-gpu/gpu_bench build-gpu/tests/cuda/cuda_test build/before/ &&
#   cp build-gpu/libfp8dot_c.so build/ &&   (cuda_test links it; this call lacked it: rc 127)
#   tar cJf build/carry/carry.tar.xz build/before build/after build/libfp8dot_c.so   (after: the diff)
# Carry ["build/carry", "build/wheel-cp312"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session46/call1/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
large=bench/results/2026-12-07-session46/call1/large-shapes.txt
t0=$SECONDS
timeout 150 build/after/cuda_test --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*' > $O/tests.log 2>&1
echo "tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/tests.log | tail -8
t0=$SECONDS
timeout 60 build/after/cuda_test --gtest_filter='CudaDotLayoutTest.*:CudaScaleLayoutTest.*' > $O/tests-layout.log 2>&1
echo "layout tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/tests-layout.log | tail -8
bench() {  # label, timeout, gpu_bench arguments
  local label=$1 limit=$2; shift 2
  ((limit > 470 - SECONDS)) && limit=$((470 - SECONDS))
  ((limit > 20)) || { echo "$label skipped (no time left)"; return; }
  t0=$SECONDS
  timeout $limit build/before/gpu_bench "$@" --csv $O/$label.csv > $O/$label.log 2>&1
  echo "$label rc=$? ($((SECONDS - t0)) s)"
}
if grep -q H200 $O/gpu.txt; then
  bench suite 150 bench/shapes.txt --configs "fp8 promoted own vs fast"
fi
bench blocks-tiles 120 $large --configs "1x128 x 128x128 own" --own-tiles 192x128,256x128,256x128c2
printf '1000 1000 1000\n1000 1000 1008\n128 4096 7168\n4096 4096 4096\n' > $O/odd-shapes.txt
for round in 1 2; do
  for side in before after; do
    ((SECONDS < 420)) || continue
    t0=$SECONDS
    timeout 50 build/$side/gpu_bench $O/odd-shapes.txt --configs "fp8 promoted own vs fast,1x128 x 128x128 row-major" \
      --csv $O/odd-$side-$round.csv > $O/odd-$side-$round.log 2>&1
    echo "odd $side $round rc=$? ($((SECONDS - t0)) s)"
  done
done
if ((SECONDS < 300)) && [[ -d build/wheel-cp312 ]]; then
  t0=$SECONDS
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout $((470 - SECONDS)) python3 bench/python/jax_bench.py --part mlp \
    --rounds 3 --variants "bf16,flax-fp8 (XLA),fp8dot-seed-kernel+fused,fp8dot-blocks-kernel+fused" \
    > $O/jax-mlp.log 2>&1
  echo "jax mlp rc=$? ($((SECONDS - t0)) s)"
fi
printf '16384 16384 16384\n8192 8192 8192\n8192 28672 8192\n4096 2112 7168\n' > $O/sustain-shapes.txt
bench blocks-sustained 110 $O/sustain-shapes.txt --sustain 2 --configs "1x128 x 128x128 own" \
  --own-tiles 192x128,256x128c2
bench tuned 120 $large --configs "1x128 x 128x128 auto tuned,fp8 promoted tuned vs fast"
if [[ -f $O/suite.log ]]; then
  echo "== suite: M,N,K | config | own/cuBLASLt (loop) | (graph) | note"
  grep '^| [0-9]' $O/suite.log | awk -F'|' '{print $2 "|" $3 "|" $6 "|" $9 "|" $14}'
fi
sed -n '/^| part/,$p' $O/jax-mlp.log 2>/dev/null
for label in blocks-tiles tuned odd-before-1 odd-after-1 odd-before-2 odd-after-2; do
  echo "== $label: M,N,K | config | fp8dot | cuBLASLt | ratio | note"
  sed -n '1,/# Sustained/p' $O/$label.log 2>/dev/null | grep '^| [0-9]' | awk -F'|' '{print $2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $14}'
done
echo "== blocks sustained: M,N,K | config | own/cuBLASLt | per clock"
sed -n '/# Sustained/,$p' $O/blocks-sustained.log | grep '^| [0-9]' | awk -F'|' '{print $2 "|" $3 "|" $6 "|" $16}'
cp $O/gpu.txt $OUT/
tar czf $OUT/call1.tgz -C $O .
