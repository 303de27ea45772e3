#!/usr/bin/env bash
# The MLP block again, untuned and autotuned alternating (2 rounds of processes), and what the
# race picks for its GEMMs (fp8dot.torch.explain with FP8DOT_AUTOTUNE=8 and without).
set -u
source scripts/gpu-call-setup.sh
OUT=$O source scripts/gpu-python-env.sh > /dev/null
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site build/carry/torchao-*.whl
for tune in 0 8; do
  FP8DOT_AUTOTUNE=$tune timeout 100 python3 bench/results/2026-12-06-h100-session39/call2/explain_mlp.py \
    > $O/explain-tune$tune.log 2>&1; echo "explain rc=$?"
done
for round in 1 2; do
  for tune in 8 0; do
    FP8DOT_AUTOTUNE=$tune timeout 150 python3 bench/python/mlp_block_bench.py --gelu tanh --rounds 3 \
      --variants bf16,torchao,fp8dot-delayed > $O/mlp-r$round-tune$tune.log 2>&1
    echo "round $round tune $tune rc=$?: $(grep -E '^fp8dot-delayed' $O/mlp-r$round-tune$tune.log)"
  done
done
grep -E "engine|GEMM|fprop|dgrad|wgrad" $O/explain-tune8.log | cut -c1-220 | head -30
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
