#!/usr/bin/env bash
# Session 29, call 2: the seed rule's gradient GEMMs as the model runs them, e5m2 gradient x e4m3
# promoted with tensor scales (bf16 D for dgrad, f32 D for wgrad into f32 master weights): the
# own kernel against cuBLASLt's promoted GEMM of the same types, on the training GEMMs and the
# suite; e4m3 promoted own and cuBLASLt fast beside them. Two rounds.
#   carry: build/carry (gpu_bench), build/wheel-cp312
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/gpu.txt
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
for round in 1 2; do
  t0=$SECONDS
  timeout 200 build/gpu_bench bench/training_shapes.txt --configs \
    "e5m2 x e4m3 promoted own,e5m2 x e4m3 promoted own f32,fp8 promoted own,fp8 fast" \
    --csv $O/training-$round.csv > $O/training-$round.log 2>&1
  echo "training round $round rc=$? ($((SECONDS - t0)) s)"
done
t0=$SECONDS
timeout 200 build/gpu_bench bench/shapes.txt --configs "e5m2 x e4m3 promoted own,e5m2 x e4m3 promoted own f32" \
  --csv $O/suite.csv > $O/suite.log 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"
python3 - $O <<'PY'
import csv, glob, statistics, sys
rows = {}
for path in sorted(glob.glob(sys.argv[1] + "/*.csv")):
    for r in csv.DictReader(open(path)):
        try:
            own, direct = float(r["fp8dot_ms"]), float(r["direct_ms"])
        except ValueError:
            continue
        rows.setdefault((int(r["m"]), int(r["n"]), int(r["k"]), r["config"]), []).append(direct / own)
print("| M,N,K | config | own/cuBLASLt (median) | rounds |\n|---|---|---|---|")
for key in sorted(rows):
    v = rows[key]
    print(f"| {key[0]},{key[1]},{key[2]} | {key[3]} | {statistics.median(v):.3f} | {' '.join(f'{x:.3f}' for x in v)} |")
PY
