#!/usr/bin/env bash
# One device call (about 2 minutes): the dependent launch kept to M <= 128 (after) against
# 58b5377 (before), alternating, 2 rounds, tensor scales promoted every 128; and the GPU tests
# of the change.
set -u
cd "$(dirname "$0")/../../.."
here=bench/pending/2026-12-06-dependent-launch-small-m
O=$OUT/o && mkdir -p $O && nvidia-smi > $O/gpu.txt
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 90 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.RunsBackToBack*:CudaOwnGemmTest.PlansName*:CudaOwnGemmTest.SplitK*:CudaOwnGemmTest.*FewerSms*' > $O/tests.log 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED" $O/tests.log | tail -6
tar czf $OUT/logs-1-tests.tgz -C $O tests.log gpu.txt
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/ba CONFIGS="fp8 promoted own vs fast" \
  timeout 150 bash scripts/gpu-before-after.sh $here/shapes.txt > $O/ba.log 2>&1
echo "before-after rc=$?"; tail -12 $O/ba/before-after.md
tar czf $OUT/logs-2-ba.tgz -C $O ba ba.log
