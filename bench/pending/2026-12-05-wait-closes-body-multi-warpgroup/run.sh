#!/usr/bin/env bash
# On the GPU machine (carry ["build/carry", "build/head", "build/syncwarp"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-05-wait-closes-body-multi-warpgroup/run.sh"):
# first racecheck on the HEAD cuda_test (build/head: does the committed code already report the
# hazards session 31 saw with the change?), then the change's racecheck and synccheck, its own-
# kernel tests, and gpu_bench before/after (block scales on DeepGEMM's shapes, tensor scales
# promoted on the suite), alternating per round. About 9 minutes; what decides comes first.
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
filter='CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*'
echo "== racecheck, HEAD (build/head)"; t0=$SECONDS
LD_LIBRARY_PATH=$PWD/build/head:$LD_LIBRARY_PATH timeout 120 compute-sanitizer --tool racecheck \
  --print-limit 20 build/head/tests/cuda/cuda_test --gtest_filter="$filter" > $O/racecheck-head.log 2>&1
echo "head racecheck rc=$? ($((SECONDS - t0)) s): $(grep -E "RACECHECK SUMMARY" $O/racecheck-head.log | tail -1)"
grep -E "^=========     and Write|Race reported" $O/racecheck-head.log | cut -c1-200 | head -6
echo "== the change"
own_gemm_sanitizers "$filter"
grep -E "^=========     and Write|Race reported" $O/racecheck.log | cut -c1-200 | head -6
if [[ -x build/syncwarp/tests/cuda/cuda_test ]]; then
  # change-syncwarp.diff: the change plus a __syncwarp() before lane 0 releases a stage (its
  # arrive's release semantics cover only its own reads of the stage's scales).
  echo "== racecheck, the change + __syncwarp (build/syncwarp)"; t0=$SECONDS
  timeout 120 compute-sanitizer --tool racecheck --print-limit 20 \
    build/syncwarp/tests/cuda/cuda_test --gtest_filter="$filter" > $O/racecheck-syncwarp.log 2>&1
  echo "syncwarp racecheck rc=$? ($((SECONDS - t0)) s): $(grep -E "RACECHECK SUMMARY" $O/racecheck-syncwarp.log | tail -1)"
fi
own_gemm_tests 150
echo "== before / after: block scales, DeepGEMM's shapes"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/blocks CONFIGS="1x128 x 128x128 own" \
  scripts/gpu-before-after.sh bench/deepgemm_shapes.txt > $O/blocks.log 2>&1
echo "blocks rc=$? ($((SECONDS - t0)) s)"
echo "== before / after: tensor scales promoted, the suite"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/promoted CONFIGS="fp8 promoted own vs fast" \
  scripts/gpu-before-after.sh bench/shapes.txt > $O/promoted.log 2>&1
echo "promoted rc=$? ($((SECONDS - t0)) s)"
tar czf $O/csv.tgz -C $O blocks promoted && rm -rf $O/blocks $O/promoted
grep -E "^\| [0-9]|loop after" $O/blocks.log $O/promoted.log | cut -d'|' -f2-7
