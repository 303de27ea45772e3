#!/usr/bin/env bash
# One device call (about 7 minutes): change.diff's GPU tests, compute-sanitizer racecheck and
# synccheck on the column-scale tests, then before/after on the B 1x128 GEMMs ("1x128 blocks
# own": the own kernel with the plan's tile, against cuBLASLt's in the same batches),
# alternating, two rounds. Build here:
#   BEFORE=1 bench/pending/build.sh bench/pending/2026-12-07-scales-freed-apart/change.diff
# then carry ["build/carry"], command:
#   tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-scales-freed-apart/run.sh
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
here=bench/pending/2026-12-07-scales-freed-apart
t0=$SECONDS
timeout 200 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.ColumnScales*:CudaOwnGemmTest.BlockScalesOfSeveral*:CudaOwnGemmTest.EveryTile*:CudaOwnGemmTest.AutoTakes*' \
  > $O/own-tests.log 2>&1
echo "own tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" $O/own-tests.log | tail -8
own_gemm_sanitizers 'CudaOwnGemmTest.ColumnScalesAreBitIdenticalToTheEmulation'
BEFORE=build/before AFTER=build ROUNDS=2 CONFIGS="1x128 blocks own" OUT=$O/ba \
  bash scripts/gpu-before-after.sh $here/shapes.txt | tail -24
cp $O/ba/before-after.md $O/own-tests.log $OUT/ 2>/dev/null
tar czf $OUT/scales-freed-apart.tgz -C $O .
