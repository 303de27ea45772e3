#!/usr/bin/env bash
# Call 2 of session 46 (the cp312 wheel at 166113a): the JAX MLP block as issue #11 times it, and
# bench/pending/2026-12-07-weight-transpose-memory's Python half.
#  1. JAX: the MLP block (8192 x 4096 -> 16384 -> 4096, fwd+bwd): bf16, Flax's own FP8 path,
#     fp8dot's seed recipe and DeepSeek blocks (quantisation kernel; +fused: GELU inside the down projection's cast), interleaved rounds: #11's
#     ratios on this GPU with today's own GEMM (last timed on 2026-12-04, before the wgrads'
#     192x128 and the 256x128 rules);
#  2. torch: the MLP block with and without Linear(recompute_weight_transpose=True), seed and
#     DeepSeek blocks, each variant's step peak measured alone;
#  3. JAX: the 300M train-step pair (keep Wᵀ / recompute it) with XLA's deterministic GPU ops,
#     where the two runs must end bit-identical;
#  4. torch: the 300M model with and without --recompute-weight-transpose (peak and ms/step).
# Carry ["build/carry", "build/wheel-cp312"]; command
#   "bash bench/results/2026-12-07-session46/call2/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
mkdir -p .whl && cp build/carry/torchao-*.whl .whl/
source scripts/gpu-call-setup.sh
t0=$SECONDS
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 170 python3 bench/python/jax_bench.py --part mlp \
  --rounds 3 --variants "bf16,flax-fp8 (XLA),fp8dot-seed-kernel+fused,fp8dot-blocks-kernel,fp8dot-blocks-kernel+fused" \
  > $O/jax-mlp.log 2>&1
echo "jax mlp rc=$? ($((SECONDS - t0)) s)"
t0=$SECONDS
timeout 150 python3 bench/python/mlp_block_bench.py --rounds 3 --steps 10 \
  --variants fp8dot-seed,fp8dot-seed+recompute,fp8dot-blocks,fp8dot-blocks+recompute \
  > $O/mlp-recompute.log 2>&1
echo "mlp recompute rc=$? ($((SECONDS - t0)) s)"
flax() {  # label, train_flax.py flags
  local label=$1; shift
  local left=$((560 - SECONDS))
  ((left > 40)) || { echo "flax $label skipped (no time left)"; return; }
  ((left > 90)) && left=90
  t0=$SECONDS
  XLA_FLAGS=--xla_gpu_deterministic_ops=true timeout $left python3 examples/train/train_flax.py \
    --config h200-300m --steps 12 --linear fp8dot --log $O/flax-$label.jsonl "$@" \
    > $O/flax-$label.out 2>&1
  echo "flax $label rc=$? ($((SECONDS - t0)) s)"
}
flax deterministic-keep
flax deterministic-recompute --recompute-weight-transpose
train() {  # label, train.py flags
  local label=$1; shift
  local left=$((570 - SECONDS))
  ((left > 40)) || { echo "train $label skipped (no time left)"; return; }
  ((left > 90)) && left=90
  t0=$SECONDS
  timeout $left python3 examples/train/train.py --compile --config h200-300m --steps 12 \
    --linear fp8dot --recipe delayed --log $O/train-$label.jsonl "$@" > $O/train-$label.out 2>&1
  echo "train $label rc=$? ($((SECONDS - t0)) s)"
}
train keep
train recompute --recompute-weight-transpose
sed -n '/^| part/,$p' $O/jax-mlp.log
sed -n '/^MLP block/,$p' $O/mlp-recompute.log
python3 - $O <<'PY'
import glob, json, sys
for path in sorted(glob.glob(f"{sys.argv[1]}/train-*.jsonl") + glob.glob(f"{sys.argv[1]}/flax-*.jsonl")):
    for line in open(path):
        s = json.loads(line)
        if s.get("type") == "summary":
            print(path.split("/")[-1], {k: v for k, v in s.items() if "ms" in k or "peak" in k or "val" in k})
PY
cp $O/gpu.txt $OUT/
tar czf $OUT/call2.tgz -C $O .
