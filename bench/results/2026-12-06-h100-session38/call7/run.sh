#!/usr/bin/env bash
# The GPU variants of the Python tests (torch ops and layers, weight cache, quantise, JAX) with
# the wheel built here; logs to $OUT/o.
set -u
source scripts/gpu-call-setup.sh
OUT=$O source scripts/gpu-python-env.sh > /dev/null
python3 -c "import fp8dot, torch, jax; print('fp8dot', fp8dot.__version__, fp8dot.cuda_device(), 'torch', torch.__version__, 'jax', jax.__version__, jax.devices())"
timeout 480 python3 -m pytest -q -rs -p no:cacheprovider -k "cuda or gpu" -W ignore::DeprecationWarning \
  tests/python/test_torch_layers.py tests/python/test_torch_weight_cache.py \
  tests/python/test_scaled_dot.py tests/python/test_quantize.py tests/python/test_hostile_input.py \
  tests/python/test_jax.py > $O/pytest.log 2>&1
echo "pytest rc $?"; tail -25 $O/pytest.log
