#!/usr/bin/env bash
# On the GPU machine: where the host time of small-M FP8 calls goes. Each call of
# bench/python/host_profile.py runs back to back under py-spy (--native: C++ frames too), and
# bench/python/profile_summary.py writes the frames that hold the most samples.
#   carry: build/wheel-cp312 .whl build-tools   (build-tools: the py-spy wheel, `pip download py-spy`)
# Environment: CALLS, comma-separated column names of small_shape_overhead.py's tables (default
# "op .default,_scaled_mm,fp8dot op"; also "fp8dot", "fp8dot cached", "torchao", ...), SHAPE
# ("--m 64 --n 4096 --k 4096"), SECONDS_PER_CALL (4), PY_SPY_OPTIONS ("--native --rate 1000";
# native sampling slows the sampled process: the Python-heavy layer calls want "--rate 200").
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-python-env.sh
python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy build-tools/py_spy-*.whl || exit 1
PY_SPY=/tmp/pyspy/bin/py-spy
IFS=, read -ra calls <<< "${CALLS:-op .default,_scaled_mm,fp8dot op}"
for call in "${calls[@]}"; do
  name=${call// /-}  # for file names
  echo "== $call"
  python3 bench/python/host_profile.py "$call" --seconds 2 ${SHAPE:-} | tee -a "$OUT/host-per-call.log"
  "$PY_SPY" record ${PY_SPY_OPTIONS:---native --rate 1000} --format raw -o "$OUT/profile-$name.txt" -- \
    python3 bench/python/host_profile.py "$call" --seconds "${SECONDS_PER_CALL:-4}" ${SHAPE:-} \
    > /dev/null 2> "/tmp/py-spy-$name.log" || tail -3 "/tmp/py-spy-$name.log"
  python3 bench/python/profile_summary.py "$OUT/profile-$name.txt" --top 40 --within "_calls.<locals>.<lambda>" > "$OUT/summary-$name.txt" &&
    head -25 "$OUT/summary-$name.txt"
done
echo "== us per call (no profiler)"
cat "$OUT/host-per-call.log"
