#!/usr/bin/env bash
# One device call (about 6 minutes): the engine race with the own kernel's candidate tiles
# (committed on 2026-12-05 in session 34, never run on a GPU). Build here and pack:
#   ninja -C build-gpu gpu_bench cuda_test fp8dot_c && mkdir -p build/carry build/tests/cuda &&
#   cp build-gpu/gpu_bench build-gpu/libfp8dot_c.so build/ &&
#   cp build-gpu/tests/cuda/cuda_test build/tests/cuda/ &&
#   tar cJf build/carry/carry.tar.xz build/gpu_bench build/libfp8dot_c.so build/tests/cuda/cuda_test
# then carry ["build/carry"], command:
#   tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-05-tile-race/run.sh
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
echo "== the race's GPU test, and the plan's explain"; t0=$SECONDS
timeout 200 build/tests/cuda/cuda_test \
  --gtest_filter='CudaOwnGemmTest.Autotuning*:CudaOwnGemmTest.ExplainNamesTheEngineAndTheTile' \
  > $O/race-tests.log 2>&1
echo "rc $? ($((SECONDS - t0)) s)"; grep -E "^\[ +(OK|FAILED|PASSED) |autotune:" $O/race-tests.log
for round in $(seq 1 "${ROUNDS:-2}"); do
  t0=$SECONDS
  timeout 150 build/gpu_bench bench/shapes.txt \
    --configs "fp8 promoted own vs fast,fp8 promoted tuned vs fast" \
    --csv $O/promoted-$round.csv > $O/promoted-$round.log 2>&1
  echo "round $round promoted rc=$? ($((SECONDS - t0)) s)"; t0=$SECONDS
  timeout 150 build/gpu_bench bench/deepgemm_shapes.txt \
    --configs "1x128 x 128x128 own,1x128 x 128x128 auto tuned" \
    --csv $O/blocks-$round.csv > $O/blocks-$round.log 2>&1
  echo "round $round blocks rc=$? ($((SECONDS - t0)) s)"
done
python3 - $O <<'PY' | tee $O/summary.md
# Per shape and config: fp8dot / the direct cuBLASLt call in the same batch (graph timing at
# M <= 128, loop above), median of the rounds, with the engine and tile the plan ran.
import csv, glob, statistics, sys
ratio, note = {}, {}
for path in glob.glob(f"{sys.argv[1]}/*-[12].csv"):
    for row in csv.DictReader(open(path)):
        try:
            m = int(row["m"])
            own, direct = ((float(row["graph_ms"]), float(row["direct_graph_ms"])) if m <= 128
                           else (float(row["fp8dot_ms"]), float(row["direct_ms"])))
        except (KeyError, ValueError):
            continue
        if own == own and direct == direct and own > 0:
            key = (row["config"], m, int(row["n"]), int(row["k"]))
            ratio.setdefault(key, []).append(direct / own)
            note[key] = row["note"].strip()
print("| config | M,N,K | fp8dot / cuBLASLt | plan |")
print("|---|---|---:|---|")
for key in sorted(ratio):
    print(f"| {key[0]} | {key[1]},{key[2]},{key[3]} | {statistics.median(ratio[key]):.3f} | "
          f"{note[key]} |")
PY
tar czf $O/csv.tgz -C $O $(cd $O && ls *.csv) && rm -f $O/*.csv
