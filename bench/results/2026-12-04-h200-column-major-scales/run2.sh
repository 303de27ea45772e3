#!/usr/bin/env bash
# Session 27, call 2: the JAX MLP block with the kernel quantised in its stored orientation
# (after) against 0042b07's autodiff.py, which transposes it in bf16 first (before): the same
# wheel, only that file differs; alternating processes. Then where the after step's time goes.
set -u
cd "$(dirname "$0")/../../.."
here=bench/results/2026-12-04-h200-column-major-scales
O=$OUT/o; mkdir -p $O
OUT=$O source scripts/gpu-python-env.sh >/dev/null
echo "== pytest: the JAX tests (the wheel of call 1 had no FFI handlers)"
timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_jax.py \
  -W ignore::DeprecationWarning > $O/pytest-jax.log 2>&1; echo "pytest rc=$?"
grep -E "passed|failed|^FAILED|^ERROR" $O/pytest-jax.log | tail -8
rm -rf /tmp/site-before && cp -r /tmp/site /tmp/site-before
cp $here/autodiff-0042b07.py /tmp/site-before/fp8dot/jax/autodiff.py
variants="bf16,flax-fp8 (XLA),fp8dot-seed-kernel,fp8dot-blocks-kernel"
for round in 1 2; do
  for which in before after; do
    site=/tmp/site; [[ $which == before ]] && site=/tmp/site-before
    PYTHONPATH=$site timeout 140 python3 bench/python/jax_bench.py --part mlp --rounds 5 \
      --variants "$variants" > $O/jax-mlp-$which-$round.log 2>&1
    echo "jax $which $round rc=$?"; grep -E "^\| mlp" $O/jax-mlp-$which-$round.log | cut -d'|' -f3,5,7
  done
done
echo "== JAX profile (after): DeepSeek blocks (kernel), seed (kernel)"
timeout 100 python3 bench/python/jax_profile.py --variants "fp8dot-blocks-kernel,fp8dot-seed-kernel" \
  --out /tmp/prof > $O/jax-profile.log 2>&1; echo "profile rc=$?"
cp /tmp/prof/*.hlo $O/ 2>/dev/null
grep -A14 "^== " $O/jax-profile.log | cut -c1-120
