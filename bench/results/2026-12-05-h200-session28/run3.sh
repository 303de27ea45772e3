#!/usr/bin/env bash
# Session 28, call 3: B 1x128 on the 192x128 tile where the plan's tile model says so, and kAuto
# taking the own kernel there (wgrad-sized dots). The changed GPU tests; gpu_bench before (the
# HEAD of call 2) and after, alternating; the JAX MLP block with DeepSeek blocks, the wheel before
# and after (its two wgrads go to the own kernel): kernel time per step, and wall time (one
# process each: device time was short).
#   carry: build/carry (tar: cuda_test, libfp8dot_c.so, gpu_bench after and before),
#          build/wheel-cp312 (after), build/wheel-before
set -u
cd "$(dirname "$0")/../../.."
here=bench/results/2026-12-05-h200-session28
O=$OUT/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit,temperature.gpu --format=csv > $O/gpu.txt
OUT=$O source scripts/gpu-python-env.sh >/dev/null
export LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site-before \
  build/wheel-before/*.whl || exit 1
echo "== cuda_test: the changed own-GEMM tests"; t0=$SECONDS
timeout 150 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.Autotuning*:CudaOwnGemmTest.ColumnScales*:CudaOwnGemmTest.*Auto*' \
  > $O/cuda-tests.log 2>&1; echo "cuda_test rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[ +(OK|PASSED|FAILED) +\]" $O/cuda-tests.log | tail -8
echo "== gpu_bench before/after: B 1x128 auto and own on the training GEMMs"; t0=$SECONDS
BEFORE=build/before AFTER=build ROUNDS=2 OUT=/tmp/ba CONFIGS="1x128 blocks,1x128 blocks own" \
  scripts/gpu-before-after.sh bench/training_shapes.txt > $O/before-after.log 2>&1
echo "before-after rc=$? ($((SECONDS - t0)) s)"; tar czf $O/ba.tgz -C /tmp ba
grep -E "^\| [0-9]|loop after" $O/before-after.log | cut -d'|' -f2-7
echo "== JAX MLP block, DeepSeek blocks: kernels per step, before and after"; t0=$SECONDS
for which in before after; do
  site=/tmp/site; [[ $which == before ]] && site=/tmp/site-before
  PYTHONPATH=$site timeout 60 python3 bench/python/jax_profile.py --steps 5 \
    --variants "fp8dot-blocks-kernel" --out /tmp/prof-$which > $O/jax-profile-$which.log 2>&1
  echo "profile $which rc=$?"; grep -E "^== |^ +[0-9.]+ us" $O/jax-profile-$which.log | head -4 | cut -c1-150
done
echo "== JAX MLP block wall time, alternating"
for round in 1; do
  for which in before after; do
    site=/tmp/site; [[ $which == before ]] && site=/tmp/site-before
    PYTHONPATH=$site timeout 100 python3 bench/python/jax_bench.py --part mlp --rounds 3 \
      --variants "bf16,fp8dot-blocks-kernel" > /tmp/jax-mlp-$which-$round.log 2>&1
    echo "jax $which $round rc=$?"; grep -E "^\| mlp" /tmp/jax-mlp-$which-$round.log | cut -d'|' -f3,5,7
  done
done
echo "($((SECONDS - t0)) s)"; tar czf $O/jax-mlp.tgz -C /tmp $(cd /tmp && ls jax-mlp-*.log)
