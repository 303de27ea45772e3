#!/usr/bin/env bash
# On the GPU machine: the experiment's GPU call (bench/pending/build.sh made its binaries). The
# own-kernel GPU tests with the change (bit-identical to the emulation on every tile), gpu_bench
# before/after, alternating per round (block scales on DeepGEMM's shapes, tensor scales promoted on
# the suite), compute-sanitizer's racecheck and synccheck where CTAs run several block-scaled 192-
# and 256-row tiles in turn (the waits the change moves), last the M = 4096 shapes on 256x128,
# 256x128c2 (DeepGEMM's choice there) and 192x128 with the change. About 8 minutes; what decides
# comes first, should the call's 10 minutes run out.
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
own_gemm_tests 150
echo "== before / after: block scales, DeepGEMM's shapes"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/blocks CONFIGS="1x128 x 128x128 own" \
  scripts/gpu-before-after.sh bench/deepgemm_shapes.txt > $O/blocks.log 2>&1
echo "blocks rc=$? ($((SECONDS - t0)) s)"
echo "== before / after: tensor scales promoted, the suite"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=$O/promoted CONFIGS="fp8 promoted own vs fast" \
  scripts/gpu-before-after.sh bench/shapes.txt > $O/promoted.log 2>&1
echo "promoted rc=$? ($((SECONDS - t0)) s)"
own_gemm_sanitizers 'CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*'
echo "== after: 256x128c2 beside the plan's tile at M = 4096"; t0=$SECONDS
grep "^4096 " bench/deepgemm_shapes.txt > /tmp/m4096.txt
timeout 150 build/gpu_bench /tmp/m4096.txt --configs "1x128 x 128x128 own" \
  --own-tiles 256x128,256x128c2,192x128 --csv $O/tiles.csv > $O/tiles.log 2>&1
echo "tiles rc=$? ($((SECONDS - t0)) s)"
tar czf $O/csv.tgz -C $O blocks promoted && rm -rf $O/blocks $O/promoted
grep -E "^\| [0-9]|loop after" $O/blocks.log $O/promoted.log | cut -d'|' -f2-7
cut -d'|' -f2-7 $O/tiles.log | grep -E "^ *[0-9]" | head -20
