#!/usr/bin/env bash
# fp8dot.set_autotune / FP8DOT_AUTOTUNE on the GPU (0937995): the new C++ and Python GPU tests,
# then #10's MLP block (tanh GELU, as sessions 33 and 38 measured it) in two processes, plans
# untuned (the default) and autotuned (FP8DOT_AUTOTUNE=8), each with bf16 and torchao 0.18.0
# beside it. Carry ["build/carry", "build/wheel-cp312"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session39/call2/run.sh".
set -u
source scripts/gpu-call-setup.sh
echo "== cuda_test CudaPlanTest.*"; t0=$SECONDS
timeout 120 build/tests/cuda/cuda_test --gtest_filter='CudaPlanTest.*' > $O/plan-tests.log 2>&1
echo "plan tests rc=$? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $O/plan-tests.log
OUT=$O source scripts/gpu-python-env.sh > /dev/null
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site build/carry/torchao-*.whl
echo "== pytest test_autotune.py"; t0=$SECONDS
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_autotune.py > $O/pytest.log 2>&1
echo "pytest rc=$? ($((SECONDS - t0)) s)"; tail -2 $O/pytest.log
for tune in 0 8; do
  echo "== MLP block, FP8DOT_AUTOTUNE=$tune"; t0=$SECONDS
  FP8DOT_AUTOTUNE=$tune timeout 220 python3 bench/python/mlp_block_bench.py --gelu tanh --rounds 3 \
    --variants bf16,torchao,fp8dot-delayed > $O/mlp-block-tune$tune.log 2>&1
  echo "mlp rc=$? ($((SECONDS - t0)) s)"; grep -v Warning $O/mlp-block-tune$tune.log | tail -6
done
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
