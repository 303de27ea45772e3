#!/usr/bin/env bash
# One device call (about 2 minutes, no change to the library): the own kernel's tensor-scaled
# GEMM promoted every 128 ("fp8 promoted own vs fast") on the suite's three small-M shapes, for
# every tile and split-K the kernel has that fits them, against cuBLASLt's fast GEMM in the same
# batches (CUDA-graph timing), 2 rounds (TILES=... runs fewer tiles; GPU_BENCH=path another
# build). Build here and pack:
#   ninja -C build-gpu gpu_bench && mkdir -p build/carry && cp build-gpu/gpu_bench build/ &&
#   tar cJf build/carry/carry.tar.xz build/gpu_bench
# then carry ["build/carry"], command:
#   tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-05-small-m-promoted-sweep/run.sh
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
here=bench/pending/2026-12-05-small-m-promoted-sweep
tiles=${TILES:-128x64,128x64s2,128x64s3,128x64s4,128x32,128x32s2,128x128,128x128s2,128x128s4,64x64,64x64s2,64x64s3,64x64s4,64x32,64x32s2,64x32s4,64x128,64x128s2,64x128s4,64x16,64x16s2}
for round in 1 2; do
  t0=$SECONDS
  timeout 120 ${GPU_BENCH:-build/gpu_bench} $here/shapes.txt --configs "fp8 promoted own vs fast" \
    --own-tiles $tiles --csv $O/sweep-$round.csv > $O/sweep-$round.log 2>&1
  echo "round $round rc=$? ($((SECONDS - t0)) s)"
done
if [[ -n "${BLOCK_TILES:-}" ]]; then
  # The same question for A 1x128 x B 128x128 (one round): the plan's tile, then each forced.
  t0=$SECONDS
  timeout 200 ${GPU_BENCH:-build/gpu_bench} $here/block-shapes.txt --configs "1x128 x 128x128 own" \
    --csv $O/block-plan.csv > $O/block-plan.log 2>&1
  timeout 200 ${GPU_BENCH:-build/gpu_bench} $here/block-shapes.txt --configs "1x128 x 128x128 own" \
    --own-tiles $BLOCK_TILES --csv $O/block-tiles.csv > $O/block-tiles.log 2>&1
  echo "block rc=$? ($((SECONDS - t0)) s)"
fi
python3 - $O <<'PY' | tee $O/sweep-summary.md
# Per shape: each tile's graph time against cuBLASLt's fast GEMM in the same batch (median of
# the rounds), best first.
import csv, glob, statistics, sys
ratio = {}
for path in glob.glob(f"{sys.argv[1]}/sweep-*.csv") + glob.glob(f"{sys.argv[1]}/block-*.csv"):
    for row in csv.DictReader(open(path)):
        try:
            own, direct = float(row["graph_ms"]), float(row["direct_graph_ms"])
        except (KeyError, ValueError):
            continue
        if own == own and direct == direct and own > 0 and row["config"].endswith(
                tuple("0123456789") + ("fast", "own")):
            mode = "promoted" if row["config"].startswith("fp8 promoted") else "block"
            shape = mode + " " + ",".join((row["m"], row["n"], row["k"]))
            tile = row["config"].split()[-1]
            tile = row["note"].split()[-1].rstrip("]") if tile in ("fast", "own") else tile
            ratio.setdefault(shape, {}).setdefault(tile, []).append(
                (direct / own, own * 1e3))
for shape, tiles in ratio.items():
    ranked = sorted(tiles.items(), key=lambda t: -statistics.median(r for r, _ in t[1]))
    print(f"| {shape} | " + ", ".join(
        f"{tile} {statistics.median(r for r, _ in v):.3f} ({statistics.median(u for _, u in v):.2f} us)"
        for tile, v in ranked[:8]) + " |")
PY
