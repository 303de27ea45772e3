#!/usr/bin/env bash
# On the GPU machine: block scales on the 128x192 tile (bench/pending/build.sh made the binaries).
# The own-kernel GPU tests (128x192 bit-identical to the emulation on every staging path, several
# tiles per CTA starting at 0 and 64 of a scale block, a second scale block past N), racecheck and
# synccheck on the several-tiles test, then gpu_bench on DeepGEMM's shapes and the training GEMMs:
# the plan's tile and 128x192, each against cuBLASLt in the same interleaved batches, alternating
# for 2 rounds. About 7 minutes.
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
own_gemm_tests 200
for round in 1 2; do
  for tiles in plan 128x192; do
    t0=$SECONDS
    flags=$([[ $tiles == plan ]] && echo "" || echo "--own-tiles $tiles")
    for shapes in deepgemm_shapes training_shapes; do
      timeout 200 build/gpu_bench bench/$shapes.txt --configs "1x128 x 128x128 own" $flags \
        --csv $O/$shapes-$tiles-$round.csv > $O/$shapes-$tiles-$round.log 2>&1
      echo "round $round $tiles $shapes rc=$? ($((SECONDS - t0)) s)"
    done
  done
done
own_gemm_sanitizers 'CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*'
python3 - $O <<'PY' | tee $O/summary.md
# Per shape: own/cuBLASLt with the plan's tile and with 128x192 (graph timing at M <= 128, loop
# above; medians over the rounds), and their ratio.
import csv, glob, statistics, sys
out = sys.argv[1]
speed = {}
for path in glob.glob(f"{out}/*_shapes-*-*.csv"):
    tiles = path.rsplit("-", 2)[1]
    for row in csv.DictReader(open(path)):
        try:
            m = int(row["m"])
            own, direct = ((float(row["graph_ms"]), float(row["direct_graph_ms"])) if m <= 128
                           else (float(row["fp8dot_ms"]), float(row["direct_ms"])))
        except (KeyError, ValueError):
            continue
        if own == own and direct == direct and own > 0:
            speed.setdefault((m, int(row["n"]), int(row["k"])), {}).setdefault(tiles, []).append(
                direct / own)
print("| M,N,K | plan's tile / cuBLASLt | 128x192 / cuBLASLt | 128x192 / plan's tile |")
print("|---|---:|---:|---:|")
for shape in sorted(speed):
    s = {t: statistics.median(v) for t, v in speed[shape].items()}
    if "plan" in s and "128x192" in s:
        print(f"| {','.join(map(str, shape))} | {s['plan']:.3f} | {s['128x192']:.3f} | "
              f"{s['128x192'] / s['plan']:.3f} |")
PY
tar czf $O/csv.tgz -C $O $(cd $O && ls *.csv) && rm -f $O/*.csv
