#!/usr/bin/env bash
# On the GPU machine (carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-06-wait-closes-body-again/run.sh"):
# build/before = HEAD, build = HEAD + change.diff (bench/pending/build.sh, BEFORE=1).
# 1. HEAD's pending test-only checks (686cc8f, 8c85d44); 2. the change's own-kernel tests;
# 3. before/after, alternating: tensor scales promoted on the suite (3 rounds), block scales on
# DeepGEMM's shapes (2 rounds); 4. the change's two large tiles side by side; 5. sanitizers.
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
echo "== HEAD: CudaQuantizeTest.*:CudaPlanTest.*"; t0=$SECONDS
LD_LIBRARY_PATH=$PWD/build/before:$LD_LIBRARY_PATH timeout 150 build/before/cuda_test \
  --gtest_filter='CudaQuantizeTest.*:CudaPlanTest.*' > $O/head-tests.log 2>&1
echo "head tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED|SKIPPED" $O/head-tests.log | tail -8
own_gemm_tests 150
echo "== before / after: tensor scales promoted, the suite"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=3 OUT=$O/promoted CONFIGS="fp8 promoted own vs fast" \
  scripts/gpu-before-after.sh bench/shapes.txt > $O/promoted.log 2>&1
echo "promoted rc=$? ($((SECONDS - t0)) s)"
echo "== before / after: block scales, DeepGEMM's shapes"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/blocks CONFIGS="1x128 x 128x128 own" \
  scripts/gpu-before-after.sh bench/deepgemm_shapes.txt > $O/blocks.log 2>&1
echo "blocks rc=$? ($((SECONDS - t0)) s)"
echo "== the change: 192x128 and 256x128 on the large promoted shapes"; t0=$SECONDS
head -7 bench/shapes.txt > $O/large.txt; echo "4096 7168 2048" >> $O/large.txt; echo "4096 2112 7168" >> $O/large.txt
timeout 120 build/gpu_bench $O/large.txt --configs "fp8 promoted own vs fast" \
  --own-tiles 192x128,256x128 > $O/tiles.log 2>&1
echo "tiles rc=$? ($((SECONDS - t0)) s)"
own_gemm_sanitizers 'CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*'
tar czf $O/csv.tgz -C $O blocks promoted && rm -rf $O/blocks $O/promoted
grep -E "^\| [0-9]" $O/tiles.log | cut -d'|' -f2-6,14
grep -E "^\| [0-9]|loop after" $O/blocks.log $O/promoted.log | cut -d'|' -f2-7
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
