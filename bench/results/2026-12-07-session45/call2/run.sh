#!/usr/bin/env bash
# Call 2 of session 45 (the cp312 wheel at af7e244): what the weight-transpose options cost and
# save on a GPU.
#  1. tests/python/test_jax_weight_transpose.py's GPU memory test as corrected in 6a86296 (its
#     first GPU run).
#  2. torch: the MLP block (8192 x 4096 -> 16384 -> 4096) with and without
#     Linear(recompute_weight_transpose=True), seed and DeepSeek blocks: ms per step and the
#     allocator's peak, interleaved in one process.
#  3. JAX: the 300M model's jitted train step (optimizer update inside the jit) with and without
#     --recompute-weight-transpose, one process each: XLA's peak_bytes_in_use and ms per step.
# Carry ["build/carry", "build/wheel-cp312"]; command
#   "bash bench/results/2026-12-07-session45/call2/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
mkdir -p .whl && cp build/carry/torchao-*.whl .whl/
source scripts/gpu-call-setup.sh
t0=$SECONDS
timeout 120 python3 -m pytest -q -rsP -p no:cacheprovider tests/python/test_jax_weight_transpose.py \
  -k "memory" -W ignore::DeprecationWarning > $O/pytest-memory.log 2>&1
echo "jax memory test rc=$? ($((SECONDS - t0)) s)"; grep "temporary bytes" $O/pytest-memory.log; tail -2 $O/pytest-memory.log
t0=$SECONDS
timeout 220 python3 bench/python/mlp_block_bench.py --rounds 3 --steps 10 \
  --variants fp8dot-seed,fp8dot-seed+recompute,fp8dot-blocks,fp8dot-blocks+recompute \
  > $O/mlp-recompute.log 2>&1
echo "mlp recompute rc=$? ($((SECONDS - t0)) s)"; sed -n '/^MLP block/,$p' $O/mlp-recompute.log
flax() {  # label, train_flax.py flags
  local label=$1; shift
  local left=$((575 - SECONDS))
  ((left > 40)) || { echo "$label skipped (no time left)"; return; }
  t0=$SECONDS
  timeout $left python3 examples/train/train_flax.py --config h200-300m --steps 12 \
    --linear fp8dot --log $O/flax-$label.jsonl "$@" > $O/flax-$label.out 2>&1
  echo "flax $label rc=$? ($((SECONDS - t0)) s)"
}
flax keep
flax recompute --recompute-weight-transpose
python3 - $O <<'PY'
import glob, json, sys
for path in sorted(glob.glob(f"{sys.argv[1]}/flax-*.jsonl")):
    for line in open(path):
        s = json.loads(line)
        if s.get("type") == "summary":
            print(path.split("flax-")[-1], {k: s.get(k) for k in ("ms_per_step", "peak_memory_bytes", "final_val_loss")})
PY
cp $O/gpu.txt $OUT/
tar czf $OUT/call2.tgz -C $O .
