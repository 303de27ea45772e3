#!/usr/bin/env bash
# One device call (~6 min): whole-producer-warps.diff (README.md says why) against the kernel
# without it, on DeepGEMM's 18 shapes (A 1x128 x B 128x128, the plan's tiles) and the suite's
# tensor scales promoted every 128, interleaved, two rounds; the own GEMM's GPU tests and
# racecheck / synccheck on two of them (the producer's exits changed).
# Build here: BEFORE=1 bench/pending/build.sh bench/pending/2026-12-07-whole-producer-warps/whole-producer-warps.diff
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-whole-producer-warps/run.sh"
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
own_gemm_tests 120
own_gemm_sanitizers 'CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCtaAreBitIdenticalToTheEmulation:CudaOwnGemmTest.ColumnScalesAreBitIdenticalToTheEmulation'
for round in 1 2; do
  for side in before after; do
    bench=build/before/gpu_bench
    [[ $side == after ]] && bench=build/gpu_bench
    t0=$SECONDS
    timeout 100 $bench bench/deepgemm_shapes.txt --configs "1x128 x 128x128 own" \
      --csv $O/block-$side-$round.csv > $O/block-$side-$round.log 2>&1
    timeout 150 $bench bench/shapes.txt --configs "fp8 promoted own vs fast" \
      --csv $O/suite-$side-$round.csv > $O/suite-$side-$round.log 2>&1
    echo "$side round $round rc=$? ($((SECONDS - t0)) s)"
  done
done
python3 - "$O" <<'PY'
import csv, sys
out = sys.argv[1]
for part in ("block", "suite"):
    rows = {}
    for side in ("before", "after"):
        for r in (1, 2):
            for row in csv.DictReader(open(f"{out}/{part}-{side}-{r}.csv")):
                if "own" not in row["config"]:
                    continue
                key = (int(row["m"]), int(row["n"]), int(row["k"]))
                graph = row["graph_ms"]
                ms = float(graph) if graph not in ("", "nan") else float(row["fp8dot_ms"])
                rows.setdefault(key, {}).setdefault(side, []).append(ms)
    print(f"== {part}: M,N,K | before us | after / before speed-up (two rounds)")
    for key in sorted(rows):
        b, a = rows[key]["before"], rows[key]["after"]
        print(f"{key[0]},{key[1]},{key[2]} | {', '.join(f'{x * 1e3:.2f}' for x in b)} | "
              + ", ".join(f"{x / y:.3f}" for x, y in zip(b, a)))
PY
cp $O/gpu.txt $OUT/
tar czf $OUT/whole-producer-warps.tgz -C $O .
