#!/usr/bin/env bash
# #10's 300M model (examples/train, h200-300m, 40 steps, torch.compile), the seed rule with
# delayed scaling with plans autotuned (--autotune 8) and untuned, and torchao's seed rule, in
# two rounds (the second in the other order; torchao once, where time allows), one process per
# run: settles whether autotuning
# becomes the default (bench/pending/README.md). First, the cuda cases of session 43's
# Linear(recompute_weight_transpose=True) and of fp8dot.jax's option (bit for bit against
# keeping the transpose; the JAX step's memory). Carry ["build/carry", "build/wheel-cp312"];
# command "bash bench/results/2026-12-06-session44/call1/run.sh".
set -u
mkdir -p .whl && cp build/carry/torchao-*.whl .whl/
source scripts/gpu-call-setup.sh  # installs the carried wheels
t0=$SECONDS
timeout 150 python3 -m pytest -q -rsP -p no:cacheprovider tests/python/test_torch_weight_transpose.py tests/python/test_jax_weight_transpose.py \
  -W ignore::DeprecationWarning > "$O/pytest.log" 2>&1
echo "weight-transpose pytest rc=$? ($((SECONDS - t0)) s)"; grep "temporary bytes" "$O/pytest.log"; tail -3 "$O/pytest.log"
train() {  # label, train.py flags
  local label=$1; shift
  t0=$SECONDS
  timeout 100 python3 examples/train/train.py --compile --config h200-300m --steps 40 \
    --log "$O/train-$label.jsonl" "$@" > "$O/train-$label.out" 2>&1
  echo "$label rc=$? ($((SECONDS - t0)) s)"
}
train fp8dot-tuned-round1 --linear fp8dot --recipe delayed --autotune 8
train fp8dot-untuned-round1 --linear fp8dot --recipe delayed
train fp8dot-untuned-round2 --linear fp8dot --recipe delayed
train fp8dot-tuned-round2 --linear fp8dot --recipe delayed --autotune 8
# torchao's seed rule, the peer, where the call's time allows (the pairs above decide).
if (( SECONDS < 440 )); then train torchao-seed-round1 --linear torchao --recipe seed; fi
python3 - "$O" <<'PY' | tee "$O/summary.md"
import glob, json, sys
print("| run | ms/step | tokens/s | final val loss |\n|---|---:|---:|---:|")
for path in sorted(glob.glob(f"{sys.argv[1]}/train-*.jsonl")):
    for line in open(path):
        s = json.loads(line)
        if s.get("type") == "summary":
            print(f"| {path.split('train-')[-1][:-6]} | {s['ms_per_step']:.2f} | "
                  f"{s['tokens_per_s']:,.0f} | {s['final_val_loss']:.4f} |")
PY
cp "$O/summary.md" "$O/gpu.txt" "$O/pytest.log" "$OUT/"
tar czf "$OUT/train-logs.tgz" -C "$O" . && rm -rf "$O"
