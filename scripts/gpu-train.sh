#!/usr/bin/env bash
# On the GPU machine: the training example (examples/train, config h200-300m, torch.compile) for
# each run in RUNS ("linear:recipe", e.g. "bf16:seed fp8dot:seed torchao:seed"), STEPS steps
# each; JSON-lines logs to $OUT, the summary line of each run printed last.
#   carry: build/wheel-cp312 .whl
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-python-env.sh
RUNS=${RUNS:-"bf16:seed fp8dot:seed fp8dot:fast fp8dot:promoted"}
for run in $RUNS; do
  linear=${run%%:*} recipe=${run##*:} name=${run/:/-}
  echo "== $name"
  python3 examples/train/train.py --config h200-300m --compile --linear "$linear" --recipe "$recipe" \
    ${STEPS:+--steps $STEPS} ${TRAIN_ARGS:-} --log "$OUT/train-$name.jsonl" >"$OUT/train-$name.out" 2>&1
  echo "exit $?"; grep -E '"summary"|Error|error' "$OUT/train-$name.out" | tail -3
done
