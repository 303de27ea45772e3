#!/usr/bin/env bash
# After the review fixes (7faf285): the C++ and Python GPU tests the autotuning setting touches,
# then every Python GPU variant once more (the torch ops' import and _core's Dot changed).
# Carry ["build/carry", "build/wheel-cp312"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session39/call4/run.sh".
set -u
source scripts/gpu-call-setup.sh
echo "== cuda_test CudaPlanTest.*, dispatch_test"; t0=$SECONDS
timeout 120 build/tests/cuda/cuda_test --gtest_filter='CudaPlanTest.*' > $O/plan-tests.log 2>&1
echo "plan tests rc=$? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $O/plan-tests.log
FP8DOT_AUTOTUNE=4 timeout 120 build/tests/dispatch_test > $O/dispatch-tests.log 2>&1
echo "dispatch tests (FP8DOT_AUTOTUNE=4) rc=$?"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED|SKIPPED \]" $O/dispatch-tests.log | head -5
OUT=$O source scripts/gpu-python-env.sh > /dev/null
echo "== pytest, the GPU variants"; t0=$SECONDS
timeout 400 python3 -m pytest -q -p no:cacheprovider -k "cuda or gpu or autotune" \
  tests/python/test_autotune.py tests/python/test_jax.py tests/python/test_scaled_dot.py \
  tests/python/test_torch_layers.py tests/python/test_torch_weight_cache.py \
  tests/python/test_quantize.py tests/python/test_hostile_input.py > $O/pytest.log 2>&1
echo "pytest rc=$? ($((SECONDS - t0)) s)"; tail -3 $O/pytest.log
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
