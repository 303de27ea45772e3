#!/usr/bin/env bash
# One device call (about 4 minutes; no change to the library), prepared in session 45 (its JAX
# pair and block-scaled tiles ran in session 46): what the torch weight-transpose option costs
# and saves, each variant measured alone.
#  1. torch: the MLP block with and without Linear(recompute_weight_transpose=True), seed and
#     DeepSeek blocks (mlp_block_bench.py's step peak: each variant's steps alone, every
#     variant's gradients freed first; session 45's process-wide peak counted the variants before).
#  2. torch: the 300M model (train.py, h200-300m, 12 steps, seed rule with delayed scaling) with
#     and without --recompute-weight-transpose, one process each: peak memory and ms per step.
# Build here: the wheel (PYTHON312=... scripts/build-gpu-carry.sh), and torchao's wheel in
# build/carry (pip download --no-deps torchao -d build/carry). Carry ["build/carry",
# "build/wheel-cp312"]; command "bash bench/pending/2026-12-07-weight-transpose-memory/run.sh"
set -u
cd "$(dirname "$0")/../../.."
mkdir -p .whl && cp build/carry/torchao-*.whl .whl/
source scripts/gpu-call-setup.sh
t0=$SECONDS
timeout 150 python3 bench/python/mlp_block_bench.py --rounds 3 --steps 10 \
  --variants fp8dot-seed,fp8dot-seed+recompute,fp8dot-blocks,fp8dot-blocks+recompute \
  > $O/mlp-recompute.log 2>&1
echo "mlp recompute rc=$? ($((SECONDS - t0)) s)"; sed -n '/^MLP block/,$p' $O/mlp-recompute.log
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
for path in sorted(glob.glob(f"{sys.argv[1]}/train-*.jsonl")):
    for line in open(path):
        s = json.loads(line)
        if s.get("type") == "summary":
            print(path.split("/")[-1], {k: v for k, v in s.items() if "ms" in k or "peak" in k or "val" in k})
PY
cp $O/gpu.txt $OUT/
tar czf $OUT/call3.tgz -C $O .
