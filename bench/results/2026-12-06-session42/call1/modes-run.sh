#!/usr/bin/env bash
# One device call (about 2 minutes a round; ROUNDS="1 2" for two): which part of the dependent
# launch cost the large GEMMs 4-15% in call 3. Own / cuBLASLt fast with the plan's launch
# (FP8DOT_PDL_MODE unset: dependent at M <= 128), then on every shape: 0 plain, 1 dependent
# launch (the kernel waits after its set-up) without the early trigger, 2 with it (the
# producer lets the next grid start after its last copies); tensor scales promoted every 128.
# The change's GPU tests first.
# Build: bench/pending/build.sh bench/results/2026-12-06-session42/call1/change.diff
# Carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-06-dependent-launch-modes/run.sh".
set -u
cd "$(dirname "$0")/../../../.."
here=bench/results/2026-12-06-session42/call1
O=$OUT/o && mkdir -p $O
export LD_LIBRARY_PATH=$PWD/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 60 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.RunsBackToBack*:CudaOwnGemmTest.PlansName*:CudaOwnGemmTest.SplitK*' > $O/tests.log 2>&1
echo "tests rc=$?"; grep -E "PASSED|FAILED" $O/tests.log | tail -4
for round in ${ROUNDS:-1}; do
  for mode in plan 0 1 2; do
    [[ $mode == plan ]] && unset FP8DOT_PDL_MODE || export FP8DOT_PDL_MODE=$mode
    timeout 80 build/gpu_bench $here/shapes.txt \
      --configs "fp8 promoted own vs fast" --csv $O/mode$mode-$round.csv > $O/mode$mode-$round.log 2>&1
    echo "round $round mode $mode rc=$?"
  done
done
unset FP8DOT_PDL_MODE
python3 - $O <<'PY' | tee $O/summary.md
import csv, glob, statistics, sys
rows = {}
for path in sorted(glob.glob(f"{sys.argv[1]}/mode*.csv")):
    mode = path.split("/")[-1][4:].split("-")[0]
    for r in csv.DictReader(open(path)):
        try:
            own, direct = float(r["fp8dot_ms"]), float(r["direct_ms"])
            g, dg = float(r["graph_ms"]), float(r["direct_graph_ms"])
        except (KeyError, ValueError):
            continue
        if own != own or own <= 0: continue
        rows.setdefault((r["m"], r["n"], r["k"]), {}).setdefault(mode, []).append((direct / own, dg / g if g == g and g > 0 else float("nan")))
print("| M,N,K | plan's launch, loop (graph) | mode 0 | mode 1 | mode 2 |")
print("|---|---|---|---|---|")
for shape, modes in rows.items():
    cells = []
    for m in ("plan", "0", "1", "2"):
        v = modes.get(m, [])
        cells.append(f"{statistics.median(x for x, _ in v):.3f} ({statistics.median(y for _, y in v):.3f})" if v else "-")
    print(f"| {','.join(shape)} | " + " | ".join(cells) + " |")
PY
tar czf $OUT/logs.tgz -C $O .
