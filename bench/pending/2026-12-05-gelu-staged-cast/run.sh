#!/usr/bin/env bash
# One device call (about 7 minutes; what decides comes first): GELU applied to the cast's staged
# tile (cp.async double-buffered, as a plain input) instead of a synchronous one-buffer load,
# and B 128x128's scale read by lane 0 with a __syncwarp before a stage's release (the own
# GEMM's racecheck hazard, bench/results/2026-12-05-h200-session33.md).
#   carry: build/s33 build/wheel-cp312 .whl
#   command: tar xJf build/s33/s33.tar.xz && bash bench/pending/2026-12-05-gelu-staged-cast/run.sh
#   (s33.tar.xz: build/s33/{cuda_test,libfp8dot_c.so,gpu_bench} of the change,
#   build/s33/before/gpu_bench of d9aea27's kernels)
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
export LD_LIBRARY_PATH=$PWD/build/s33:$LD_LIBRARY_PATH
echo "== C++: GELU and SwiGLU casts against the CPU"; t0=$SECONDS
timeout 150 build/s33/cuda_test --gtest_filter='CudaQuantizeTest.Gelu*:CudaQuantizeTest.SwiGlu*' \
  > $O/cpp-activations.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; grep -E "^\[ +(OK|FAILED|PASSED) " $O/cpp-activations.log
echo "== racecheck: block scales over several tiles per CTA"; t0=$SECONDS
timeout 100 compute-sanitizer --tool racecheck --print-limit 20 build/s33/cuda_test \
  --gtest_filter='CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*' > $O/racecheck.log 2>&1
echo "rc $? ($((SECONDS - t0)) s): $(grep -E "RACECHECK SUMMARY" $O/racecheck.log | tail -1)"
grep -E "Race reported|^\[ +(OK|FAILED) " $O/racecheck.log | cut -c1-160 | head -5
echo "== torch MLP block, GELU tanh"; t0=$SECONDS
timeout 120 python3 bench/python/mlp_block_bench.py --gelu tanh --rounds 3 --variants \
  "bf16,torchao,fp8dot-delayed,fp8dot-delayed+fused" > $O/mlp-block-gelu-tanh.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; tail -6 $O/mlp-block-gelu-tanh.log
echo "== JAX MLP block"; t0=$SECONDS
timeout 100 python3 bench/python/jax_bench.py --part mlp --rounds 3 --variants \
  "bf16,fp8dot-blocks-kernel,fp8dot-blocks-kernel+fused,fp8dot-seed-kernel,fp8dot-seed-kernel+fused" \
  > $O/jax-mlp.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; grep -E "^\| mlp" $O/jax-mlp.log | cut -d'|' -f3,5,7
timeout 60 python3 bench/python/jax_profile.py --variants "fp8dot-blocks-kernel+fused" \
  --out $O/jaxprof > $O/jax-profile.log 2>&1; rm -rf $O/jaxprof
grep -E "quantize_cast|fusion|GPU span|of GPU kernels" $O/jax-profile.log | cut -c1-150
echo "== before / after: block scales, DeepGEMM's shapes"; t0=$SECONDS
BEFORE=build/s33/before AFTER=build/s33 ROUNDS=2 OUT=$O/blocks CONFIGS="1x128 x 128x128 own" \
  scripts/gpu-before-after.sh bench/deepgemm_shapes.txt > $O/blocks.log 2>&1
echo "blocks rc=$? ($((SECONDS - t0)) s)"
tar czf $O/blocks.tgz -C $O blocks && rm -rf $O/blocks
grep -E "^\| [0-9]|loop after" $O/blocks.log | cut -d'|' -f2-5
echo "== C++: the own GEMM's tests"; t0=$SECONDS
timeout 150 build/s33/cuda_test --gtest_filter='CudaOwnGemmTest.*' > $O/own-gemm-tests.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; grep -E "^\[ +(FAILED|PASSED) |tests ran" $O/own-gemm-tests.log | tail -4
