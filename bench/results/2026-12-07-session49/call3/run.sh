#!/usr/bin/env bash
# Session 49, call 3 (one device call, ~5 min): v4 = B 128x128's scales through the copy engine
# (a 4-scale box per stage, along K or N, whichever is contiguous), every copy of a stage from
# the one copy thread (call 2: moving A's scale copy into it paid 3-4% at M = 4096, but a
# cp.async of B's scale in that thread cost up to 24% on the small tiles);
#  1. the own GEMM's and the plan's GPU tests at v4 (against the CPU emulation, bit for bit);
#  2. v0 (bfd8700) and v4 interleaved on DeepGEMM's 18 shapes, the plan's tiles, two rounds;
#  3. the rest of cuda_test at v4.
# Carry ["build/carry"] (build/carry/carry.tar.xz: build/v0/gpu_bench, build/v4); command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session49/call3/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
export LD_LIBRARY_PATH=$PWD/build/v4:$LD_LIBRARY_PATH
t0=$SECONDS
timeout 120 build/v4/cuda_test --gtest_filter='CudaOwnGemmTest.*:CudaPlanTest.*' > $O/tests-v4.log 2>&1
echo "own tests v4 rc=$? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED) \]|FAILED  \]" $O/tests-v4.log | tail -8
for round in 1 2; do
  for v in v0 v4; do
    t0=$SECONDS
    timeout 100 build/$v/gpu_bench bench/deepgemm_shapes.txt --configs "1x128 x 128x128 own" \
      --csv $O/$v-$round.csv > $O/$v-$round.log 2>&1
    echo "$v round $round rc=$? ($((SECONDS - t0)) s)"
  done
done
t0=$SECONDS
timeout 150 build/v4/cuda_test --gtest_filter='-CudaOwnGemmTest.*:CudaPlanTest.*' > $O/tests-v4-rest.log 2>&1
echo "other tests v4 rc=$? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED) \]|FAILED  \]" $O/tests-v4-rest.log | tail -8
python3 - "$O" <<'PY'
import csv, sys
out = sys.argv[1]
rows = {}
for v in ("v0", "v4"):
    for r in (1, 2):
        for row in csv.DictReader(open(f"{out}/{v}-{r}.csv")):
            if row["config"] != "1x128 x 128x128 own":
                continue
            key = (int(row["m"]), int(row["n"]), int(row["k"]))
            graph = row["graph_ms"]
            ms = float(graph) if graph not in ("", "nan") else float(row["fp8dot_ms"])
            direct = row["direct_graph_ms"] if graph not in ("", "nan") else row["direct_ms"]
            rows.setdefault(key, {}).setdefault(v, []).append((ms, float(direct)))
print("M,N,K | v0 us | v4/v0 speed-up | v4 own/cuBLASLt (graphs at M <= 128)")
for key in sorted(rows):
    d = rows[key]
    base = [x[0] for x in d["v0"]]
    up = ", ".join(f"{b / x[0]:.3f}" for b, x in zip(base, d["v4"]))
    own = ", ".join(f"{x[1] / x[0]:.3f}" for x in d["v4"])
    print(f"{key[0]},{key[1]},{key[2]} | {', '.join(f'{b * 1e3:.2f}' for b in base)} | {up} | {own}")
PY
cp $O/gpu.txt $OUT/
tar czf $OUT/call3.tgz -C $O .
