#!/usr/bin/env bash
# On the GPU machine: the training example (examples/train, config h200-300m) for each run in
# RUNS, STEPS steps each; JSON-lines logs to $OUT, the summary line of each run printed last.
#   torch (train.py, torch.compile): "linear:recipe", e.g. "bf16:seed fp8dot:seed torchao:seed"
#                                    (torchao:fast: the peer with fast accumulation everywhere)
#   JAX (train_flax.py, jax.jit):    "jax:linear[:recipe]", e.g. "jax:bf16 jax:flax-fp8 jax:fp8dot
#                                    jax:fp8dot:seed" (jax:fp8dot alone: fp8dot.flax's default,
#                                    Flax's delayed recipe)
# SEEDS="0 1 2" runs each of RUNS once per seed (logs train-<run>-seed<N>.jsonl); without it,
# one run each with the script's default seed. ROUNDS=3 repeats the whole list three times,
# interleaved (logs train-<run>-round<N>.jsonl; plot.py's speed table takes the medians): a
# speed comparison of a few percent needs it. TRAIN_ARGS go to every run: the flags both
# scripts take (hyperparameters).
# The logs come back packed in $OUT/train-logs.tgz (the device tool returns at most 8 files a
# call; one run writes two).
#   carry: build/wheel-cp312 .whl
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-python-env.sh
RUNS=${RUNS:-"bf16:seed fp8dot:seed fp8dot:fast fp8dot:promoted"}
for round in $(seq 1 "${ROUNDS:-1}"); do
  for run in $RUNS; do
    name=${run//:/-}
    case $run in
      jax:*)
        IFS=: read -r _ linear recipe <<<"$run"
        command=(examples/train/train_flax.py --linear "$linear" ${recipe:+--recipe "$recipe"}) ;;
      *)
        command=(examples/train/train.py --compile --linear "${run%%:*}" --recipe "${run##*:}") ;;
    esac
    for seed in ${SEEDS:-default}; do
      [[ $seed == default ]] && seed=""
      log=$name${seed:+-seed$seed}
      [[ ${ROUNDS:-1} -gt 1 ]] && log=$log-round$round
      echo "== $log"
      python3 "${command[@]}" --config h200-300m ${STEPS:+--steps $STEPS} ${seed:+--seed $seed} \
        ${TRAIN_ARGS:-} --log "$OUT/train-$log.jsonl" >"$OUT/train-$log.out" 2>&1
      echo "exit $?"; grep -E '"summary"|Error|error' "$OUT/train-$log.out" | tail -3
    done
  done
done
# With several seeds, plot.py's second table says whether each recipe ends within bf16's own
# seed-to-seed spread; with ROUNDS, its speed table sets the medians side by side (printed here).
if [[ ${ROUNDS:-1} -gt 1 ]]; then
  python3 examples/train/plot.py --no-png "$OUT"/train-*-round*.jsonl | tee "$OUT/speed-table.md"
fi
(cd "$OUT" && tar -czf train-logs.tgz train-*.jsonl train-*.out && rm -f train-*.jsonl train-*.out)
