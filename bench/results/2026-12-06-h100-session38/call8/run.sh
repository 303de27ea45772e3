#!/usr/bin/env bash
# Issue #10's MLP block (tanh GELU, as session 33 measured it) after session 37's change to
# delayed scaling (amaxes recorded in the backward), with torchao 0.18.0 beside it.
set -u
source scripts/gpu-call-setup.sh
OUT=$O source scripts/gpu-python-env.sh > /dev/null
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site build/carry/torchao-*.whl
timeout 400 python3 bench/python/mlp_block_bench.py --gelu tanh --rounds 3 \
  --variants bf16,torchao,fp8dot-delayed,fp8dot-seed > $O/mlp-block-gelu-tanh.log 2>&1
echo "mlp rc $?"; grep -v Warning $O/mlp-block-gelu-tanh.log | tail -12
