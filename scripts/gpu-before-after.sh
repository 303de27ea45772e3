#!/usr/bin/env bash
# Runs on the GPU machine: gpu_bench of two builds (before and after a change) on the same GPU in
# one session, alternating per round so that clock and thermal drift hit both alike, and prints
# after/before per shape and config. For changes that must not move performance (refactors).
#
#   BEFORE=dir-with-gpu_bench AFTER=dir-with-gpu_bench [ROUNDS=2] [CONFIGS="fp8 fast,..."] \
#     [GPU_BENCH_ARGS="--own-tiles 64x64s2,..."] scripts/gpu-before-after.sh [shapes.txt]
# Logs and CSVs go to $OUT. Each gpu_bench run is bounded by a timeout.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-before-after}
SHAPES=${1:-bench/shapes.txt}
ROUNDS=${ROUNDS:-2}
CONFIGS=${CONFIGS:-fp8 fast,fp8 promoted,1x128 x 128x128,bf16}
read -ra extra_args <<< "${GPU_BENCH_ARGS:-}"
mkdir -p "$OUT"
for round in $(seq 1 "$ROUNDS"); do
  for which in before after; do
    dir=$([ "$which" = before ] && echo "$BEFORE" || echo "$AFTER")
    echo "== round $round: $which ($dir)"
    timeout 200 "$dir/gpu_bench" "$SHAPES" --configs "$CONFIGS" "${extra_args[@]}" \
      --csv "$OUT/$which-$round.csv" > "$OUT/$which-$round.log" 2>&1
    echo "rc=$?"
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY' | tee "$OUT/before-after.md"
import csv, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(which):
    rows = {}
    for r in range(1, rounds + 1):
        try:
            for row in csv.DictReader(open(f"{out}/{which}-{r}.csv")):
                key = (row["m"], row["n"], row["k"], row["config"])
                for column in ("fp8dot_ms", "graph_ms", "direct_ms"):
                    try:
                        value = float(row[column])
                    except (KeyError, ValueError):
                        continue
                    if value == value and value > 0:
                        rows.setdefault(key, {}).setdefault(column, []).append(value)
        except FileNotFoundError:
            pass
    return rows
before, after = load("before"), load("after")
print("after/before speed (> 1: the change is faster), median over rounds; fp8dot/direct from the")
print("same gpu_bench run shows how far each build's plan is from cuBLASLt called directly")
print("| M,N,K | config | loop after/before | graph after/before (small calls) | fp8dot/direct before | fp8dot/direct after |")
print("|---|---|---|---|---|---|")
ratios = []
for key in before:
    if key not in after or key[3] == "memory floor":
        continue
    b, a = before[key], after[key]
    def speed(column):
        if column not in b or column not in a:
            return ""
        r = statistics.median(b[column]) / statistics.median(a[column])
        if column == "fp8dot_ms":
            ratios.append(r)
        return f"{r:.3f}"
    def versus_direct(x):
        if "direct_ms" not in x or "fp8dot_ms" not in x:
            return ""
        return f"{statistics.median(x['direct_ms']) / statistics.median(x['fp8dot_ms']):.3f}"
    print(f"| {','.join(key[:3])} | {key[3]} | {speed('fp8dot_ms')} | {speed('graph_ms')} | "
          f"{versus_direct(b)} | {versus_direct(a)} |")
if ratios:
    print(f"\nloop after/before over {len(ratios)} rows: min {min(ratios):.3f}, median "
          f"{statistics.median(ratios):.3f}, max {max(ratios):.3f}")
PY
