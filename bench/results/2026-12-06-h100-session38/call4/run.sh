#!/usr/bin/env bash
# One device call (about 4 minutes): the 192x128 tile in a 2-CTA cluster sharing A (192x128c2)
# against 192x128 alone and the 256-row tiles, each against cuBLASLt in the same batches.
# Carry build/gpu_bench, build/libfp8dot_c.so, build/tests/cuda/cuda_test (packed as
# build/carry/carry.tar.xz), then: tar xJf build/carry/carry.tar.xz && bash <this file>
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
here=bench/pending/2026-12-06-cluster-192
t0=$SECONDS
timeout 240 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.EveryTile*:CudaOwnGemmTest.ColumnScales*:CudaOwnGemmTest.OuterScalesWithAny*' \
  > $O/tests.log 2>&1
echo "tests rc $? ($((SECONDS - t0)) s)"; grep -E "^\[ +(FAILED|PASSED) |Failure" $O/tests.log | head
for round in 1 2; do
  t0=$SECONDS
  timeout 120 build/gpu_bench $here/large-shapes.txt --configs "fp8 promoted own vs fast" \
    --own-tiles 192x128,192x128c2,256x128,256x128c2 --csv $O/promoted-$round.csv > $O/promoted-$round.log 2>&1
  echo "round $round promoted rc=$? ($((SECONDS - t0)) s)"; t0=$SECONDS
  timeout 90 build/gpu_bench $here/block-shapes.txt --configs "1x128 x 128x128 own" \
    --own-tiles 192x128,192x128c2 --csv $O/blocks-$round.csv > $O/blocks-$round.log 2>&1
  echo "round $round blocks rc=$? ($((SECONDS - t0)) s)"
done
# The host cost of a plan's run (an event recorded per run since 1cee680): loop-timed fp8dot
# against the direct cuBLASLt call at the small-M shapes, where launches dominate.
printf '64 4096 7168\n128 7168 2048\n128 4096 7168\n' > $O/small.txt
timeout 60 build/gpu_bench $O/small.txt --configs "fp8 fast,fp8 promoted" > $O/host-cost.log 2>&1
echo "host cost rc=$?"; grep -E "^\| (64|128)," $O/host-cost.log | cut -d'|' -f2-6
python3 - $O <<'PY' | tee $O/summary.md
# Per shape and tile: fp8dot / cuBLASLt direct in the same batch (loop timing), median of rounds.
import csv, glob, statistics, sys
ratio = {}
for path in sorted(glob.glob(f"{sys.argv[1]}/*-[12].csv")):
    for row in csv.DictReader(open(path)):
        try:
            own, direct = float(row["fp8dot_ms"]), float(row["direct_ms"])
        except (KeyError, ValueError):
            continue
        if own == own and direct == direct and own > 0:
            key = (path.split("/")[-1].split("-")[0], ",".join((row["m"], row["n"], row["k"])))
            ratio.setdefault(key, {}).setdefault(row["config"].split()[-1], []).append(direct / own)
for (mode, shape), tiles in sorted(ratio.items()):
    print(f"| {mode} | {shape} | " + " | ".join(
        f"{t} {statistics.median(v):.3f}" for t, v in tiles.items()) + " |")
PY
