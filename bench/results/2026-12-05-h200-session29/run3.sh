#!/usr/bin/env bash
# Session 29, call 3: the whole cuda_test at the final C++ (outer scales copied at the tile's
# start), compute-sanitizer racecheck and synccheck on the test of several tiles per CTA (the
# shared-memory scales are rewritten by the next tile), and the #15 promoted-vs-fast table once
# more (3 rounds, the final build).
#   carry: build/carry (cuda_test, gpu_bench, libfp8dot_c.so), build/wheel-cp312
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/gpu.txt
OUT=$O source scripts/gpu-python-env.sh >/dev/null
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
echo "== cuda_test (all)"; t0=$SECONDS
timeout 260 build/tests/cuda/cuda_test > $O/cuda-tests.log 2>&1; echo "cuda_test rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED|SKIPPED \]" $O/cuda-tests.log | tail -8
for tool in racecheck synccheck; do
  echo "== compute-sanitizer $tool"; t0=$SECONDS
  timeout 120 compute-sanitizer --tool $tool --print-limit 20 build/tests/cuda/cuda_test \
    --gtest_filter='CudaOwnGemmTest.OuterScalesOfSeveralTilesPerCta*' > $O/$tool.log 2>&1
  echo "$tool rc=$? ($((SECONDS - t0)) s)"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $O/$tool.log | tail -4
done
for round in 1 2 3; do
  timeout 200 build/gpu_bench bench/shapes.txt --configs "fp8 promoted own vs fast" \
    --csv $O/suite-$round.csv > $O/suite-$round.log 2>&1
  echo "suite round $round rc=$?"
done
python3 - $O <<'PY'
import csv, glob, statistics, sys
rows = {}
for path in sorted(glob.glob(sys.argv[1] + "/suite-*.csv")):
    for r in csv.DictReader(open(path)):
        if r["config"] != "fp8 promoted own vs fast":
            continue
        column = "graph_ms" if int(r["m"]) <= 128 else "fp8dot_ms"
        direct = "direct_graph_ms" if int(r["m"]) <= 128 else "direct_ms"
        rows.setdefault((r["m"], r["n"], r["k"], r["note"].strip()), []).append(float(r[direct]) / float(r[column]))
met = 0
print("| M,N,K | own tile | own promoted / cuBLASLt fast (median; graph at M <= 128) | rounds |\n|---|---|---|---|")
for key, v in rows.items():
    met += statistics.median(v) >= 1.0
    print(f"| {key[0]},{key[1]},{key[2]} | {key[3]} | {statistics.median(v):.3f} | {' '.join(f'{x:.3f}' for x in v)} |")
print(f"\n>= 1.0: {met} of {len(rows)}")
PY
