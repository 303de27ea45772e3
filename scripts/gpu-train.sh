#!/usr/bin/env bash
# On the GPU machine: the training example (examples/train, config h200-300m) for each run in
# RUNS, STEPS steps each; JSON-lines logs to $OUT, the summary line of each run printed last.
#   torch (train.py, torch.compile): "linear:recipe", e.g. "bf16:seed fp8dot:seed torchao:seed"
#   JAX (train_flax.py, jax.jit):    "jax:linear[:recipe]", e.g. "jax:bf16 jax:flax-fp8 jax:fp8dot
#                                    jax:fp8dot:seed" (jax:fp8dot alone: fp8dot.flax's default,
#                                    Flax's delayed recipe)
# TRAIN_ARGS go to every run: the flags both scripts take (hyperparameters, --seed).
#   carry: build/wheel-cp312 .whl
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-python-env.sh
RUNS=${RUNS:-"bf16:seed fp8dot:seed fp8dot:fast fp8dot:promoted"}
for run in $RUNS; do
  name=${run//:/-}
  case $run in
    jax:*)
      IFS=: read -r _ linear recipe <<<"$run"
      command=(examples/train/train_flax.py --linear "$linear" ${recipe:+--recipe "$recipe"}) ;;
    *)
      command=(examples/train/train.py --compile --linear "${run%%:*}" --recipe "${run##*:}") ;;
  esac
  echo "== $name"
  python3 "${command[@]}" --config h200-300m ${STEPS:+--steps $STEPS} ${TRAIN_ARGS:-} \
    --log "$OUT/train-$name.jsonl" >"$OUT/train-$name.out" 2>&1
  echo "exit $?"; grep -E '"summary"|Error|error' "$OUT/train-$name.out" | tail -3
done
