#!/usr/bin/env bash
# One device call (~8 min): whole-producer-warps.diff (README.md says why) against the kernel
# without it, interleaved: DeepGEMM's 18 shapes (A 1x128 x B 128x128, the plan's tiles) two
# rounds, the suite's tensor scales promoted every 128 one round; first the own GEMM's GPU tests,
# last racecheck / synccheck on two of them (the producer's exits changed).
# Build here: BEFORE=1 bench/pending/build.sh bench/pending/2026-12-07-whole-producer-warps/whole-producer-warps.diff
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-whole-producer-warps/run.sh"
# With ROUNDS=1 SKIP_SUITE=1 in front (little device time left): one round on DeepGEMM's shapes,
# no suite (~3-4 min).
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
pack_logs() { cp $O/gpu.txt $OUT/ && tar czf $OUT/whole-producer-warps.tgz -C $O .; }
own_gemm_tests 120
bench_side() {  # SIDE PART SHAPES CONFIGS ROUND SECONDS
  local bench=build/before/gpu_bench t0=$SECONDS
  [[ $1 == after ]] && bench=build/gpu_bench
  timeout "$6" $bench "$3" --configs "$4" --csv $O/$2-$1-$5.csv > $O/$2-$1-$5.log 2>&1
  echo "$2 $1 round $5 rc=$? ($((SECONDS - t0)) s)"
}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for side in before after; do
    bench_side $side block bench/deepgemm_shapes.txt "1x128 x 128x128 own" $round 100
  done
done
for side in before after; do
  [[ ${SKIP_SUITE:-0} == 1 ]] && break
  bench_side $side suite bench/shapes.txt "fp8 promoted own vs fast" 1 150
done
python3 - "$O" <<'PY'
import csv, os, sys
out = sys.argv[1]
for part in ("block", "suite"):
    rows = {}
    for side in ("before", "after"):
        for r in (1, 2):
            if not os.path.exists(f"{out}/{part}-{side}-{r}.csv"):
                continue
            for row in csv.DictReader(open(f"{out}/{part}-{side}-{r}.csv")):
                if "own" not in row["config"]:
                    continue
                key = (int(row["m"]), int(row["n"]), int(row["k"]))
                graph = row["graph_ms"]
                ms = float(graph) if graph not in ("", "nan") else float(row["fp8dot_ms"])
                rows.setdefault(key, {}).setdefault(side, []).append(ms)
    print(f"== {part}: M,N,K | before us | after / before speed-up (each round)")
    for key in sorted(rows):
        b, a = rows[key].get("before", []), rows[key].get("after", [])
        print(f"{key[0]},{key[1]},{key[2]} | {', '.join(f'{x * 1e3:.2f}' for x in b)} | "
              + ", ".join(f"{x / y:.3f}" for x, y in zip(b, a)))
PY
pack_logs
# Last, so that a call cut short still returns the speeds.
own_gemm_sanitizers 'CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCtaAreBitIdenticalToTheEmulation:CudaOwnGemmTest.ColumnScalesAreBitIdenticalToTheEmulation'
pack_logs
