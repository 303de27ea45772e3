#!/usr/bin/env bash
# One device call (about 5 minutes; no change to the library), prepared in session 45, whose
# device time ran out: what the weight-transpose options cost and save, each variant measured
# alone, and the block-scaled large tiles on the GPU at hand.
#  1. torch: the MLP block with and without Linear(recompute_weight_transpose=True), seed and
#     DeepSeek blocks (mlp_block_bench.py's step peak: each variant's steps alone, every
#     variant's gradients freed first; session 45's process-wide peak counted the variants before).
#  2. torch: the 300M model (train.py, h200-300m, 12 steps, seed rule with delayed scaling) with
#     and without --recompute-weight-transpose, one process each: peak memory and ms per step.
#  3. JAX: session 45's pair of 300M train steps (call 2) again with XLA's deterministic GPU ops.
#  4. A 1x128 x B 128x128 on the large GEMMs: 192x128 (the plan's) against 256x128 and
#     256x128c2 forced, interleaved (on an H100 in session 45 the plan's 192x128 ran 0.92-0.96x
#     cuBLASLt there).
# Build here: ninja -C build-gpu gpu_bench && mkdir -p build/before build/carry &&
#   cp build-gpu/gpu_bench build/before/ && tar cJf build/carry/carry.tar.xz build/before/gpu_bench
# and the wheel (PYTHON312=... scripts/build-gpu-carry.sh); build/carry also holds torchao's
# wheel (pip download --no-deps torchao). Carry ["build/carry", "build/wheel-cp312"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-weight-transpose-memory/run.sh"
set -u
cd "$(dirname "$0")/../../.."
mkdir -p .whl && cp build/carry/torchao-*.whl .whl/
source scripts/gpu-call-setup.sh
here=bench/pending/2026-12-07-weight-transpose-memory
t0=$SECONDS
timeout 150 python3 bench/python/mlp_block_bench.py --rounds 3 --steps 10 \
  --variants fp8dot-seed,fp8dot-seed+recompute,fp8dot-blocks,fp8dot-blocks+recompute \
  > $O/mlp-recompute.log 2>&1
echo "mlp recompute rc=$? ($((SECONDS - t0)) s)"; sed -n '/^MLP block/,$p' $O/mlp-recompute.log
# The JAX option's run of call 2 ended 0.05% away from keeping Wᵀ (validation loss after 12
# steps): the pair again with XLA's deterministic GPU ops, where the two must be bit-identical.
flax() {  # label, train_flax.py flags
  local label=$1; shift
  t0=$SECONDS
  XLA_FLAGS=--xla_gpu_deterministic_ops=true timeout 90 python3 examples/train/train_flax.py \
    --config h200-300m --steps 12 --linear fp8dot --log $O/flax-$label.jsonl "$@" \
    > $O/flax-$label.out 2>&1
  echo "flax $label rc=$? ($((SECONDS - t0)) s)"
}
flax deterministic-keep
flax deterministic-recompute --recompute-weight-transpose
train() {  # label, train.py flags
  local label=$1; shift
  t0=$SECONDS
  timeout 90 python3 examples/train/train.py --compile --config h200-300m --steps 12 \
    --linear fp8dot --recipe delayed --log $O/train-$label.jsonl "$@" > $O/train-$label.out 2>&1
  echo "train $label rc=$? ($((SECONDS - t0)) s)"
}
train keep
train recompute --recompute-weight-transpose
python3 - $O <<'PY'
import glob, json, sys
for path in sorted(glob.glob(f"{sys.argv[1]}/train-*.jsonl") + glob.glob(f"{sys.argv[1]}/flax-*.jsonl")):
    for line in open(path):
        s = json.loads(line)
        if s.get("type") == "summary":
            print(path.split("/")[-1], {k: v for k, v in s.items() if "ms" in k or "peak" in k or "val" in k})
PY
left=$((330 - SECONDS)) t0=$SECONDS
if ((left > 20)); then
  timeout $left build/before/gpu_bench $here/large-shapes.txt --configs "1x128 x 128x128 own" \
    --own-tiles 192x128,256x128,256x128c2 --csv $O/blocks.csv > $O/blocks.log 2>&1
  echo "blocks interleaved rc=$? ($((SECONDS - t0)) s)"
fi
echo "== blocks, interleaved: M,N,K | config | own/cuBLASLt"
sed -n '1,/# Sustained/p' $O/blocks.log 2>/dev/null | grep '^| [0-9]' | awk -F'|' '{print $2 "|" $3 "|" $6}'
cp $O/gpu.txt $OUT/
tar czf $OUT/call3.tgz -C $O .
