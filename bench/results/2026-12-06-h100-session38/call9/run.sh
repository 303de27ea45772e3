#!/usr/bin/env bash
# Small-M tiles in clusters sharing A (c2, c4) against the same tiles alone, CUDA-graph timing,
# each against cuBLASLt in the same batches: the suite's promoted small-M shapes (against
# cuBLASLt's fast GEMM) and DeepGEMM's M <= 128 block-scaled shapes.
set -u
source scripts/gpu-call-setup.sh
tar xJf build/carry/carry.tar.xz
t0=$SECONDS
timeout 150 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.EveryTile*:CudaOwnGemmTest.SplitK*:CudaOwnGemmTest.OuterScalesWithAny*' > $O/tests.log 2>&1
echo "tests rc $? ($((SECONDS - t0)) s)"; grep -E "^\[ +(FAILED|PASSED) |Failure" $O/tests.log | head
tiles=128x64,128x64c2,64x128,64x128c2,64x64,64x64c2,64x32,64x32c2,64x32c4
printf '64 4096 7168\n128 7168 2048\n128 4096 7168\n' > $O/promoted-shapes.txt
grep -E "^(64|128) " bench/deepgemm_shapes.txt > $O/block-shapes.txt
t0=$SECONDS
timeout 150 build/gpu_bench $O/promoted-shapes.txt --configs "fp8 promoted own vs fast" --own-tiles $tiles --csv $O/promoted.csv > $O/promoted.log 2>&1
echo "promoted rc $? ($((SECONDS - t0)) s)"; t0=$SECONDS
timeout 240 build/gpu_bench $O/block-shapes.txt --configs "1x128 x 128x128 own" --own-tiles $tiles --csv $O/blocks.csv > $O/blocks.log 2>&1
echo "blocks rc $? ($((SECONDS - t0)) s)"
python3 - $O <<'PY' | tee $O/summary.md
import csv, sys
rows = {}
for name in ("promoted", "blocks"):
    try:
        reader = csv.DictReader(open(f"{sys.argv[1]}/{name}.csv"))
    except OSError:
        continue
    for row in reader:
        try:
            own, direct = float(row["graph_ms"]), float(row["direct_graph_ms"])
        except (KeyError, ValueError):
            continue
        if own == own and direct == direct and own > 0:
            rows.setdefault((name, row["m"], row["n"], row["k"]), []).append(
                (row["config"].split()[-1], direct / own))
for (name, m, n, k), tiles in rows.items():
    best = max(tiles, key=lambda t: t[1])
    print(f"| {name} | {m},{n},{k} | " + " ".join(f"{t} {r:.3f}" for t, r in tiles) +
          f" | best {best[0]} {best[1]:.3f} |")
PY
cd $O && tar czf logs.tgz *.csv *.log *.txt && rm -f *.csv promoted.log blocks.log *-shapes.txt
