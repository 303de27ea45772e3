#!/usr/bin/env bash
# A/B on the device: the model with separate gate/up projections (old) against one gate_up GEMM (new).
set -uo pipefail
source scripts/gpu-python-env.sh >/dev/null
for run in bf16:seed fp8dot:fast-delayed torchao:seed; do
  for variant in old new; do
    cp .ab/gpt_$variant.py examples/train/gpt.py
    name=${run//:/-}-$variant
    python3 examples/train/train.py --compile --linear "${run%%:*}" --recipe "${run##*:}" --config h200-300m --steps 40 --log "$OUT/$name.jsonl" > "$OUT/$name.out" 2>&1
    echo "$name exit $? $(grep -h '"summary"' "$OUT/$name.jsonl" | python3 -c 'import sys,json; print(round(json.loads(sys.stdin.read())["ms_per_step"],2))')"
  done
done
