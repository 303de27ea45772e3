#!/usr/bin/env bash
# One device call (about 8 minutes): GELU computed inside the FP8 cast (QuantizeActivation::kGelu,
# fp8dot.torch.Linear.gelu), built on 2026-12-05 with no GPU lent: the C++ bit-identity tests of
# every activation, the CUDA pytest cases, then issue #10's MLP block benchmark with GELU's tanh
# form for every variant (bf16, torchao, fp8dot's seed rule tensorwise and delayed, unfused and
# +fused), interleaved round by round. CALL=2: the JAX MLP block likewise (about 5 minutes).
#   carry: build/wheel-cp312 .whl build/gelu  (build/gelu: tests/cuda/cuda_test, libfp8dot_c.so)
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/gpu-python-env.sh >/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/gpu.txt"
if [[ ${CALL:-1} == 2 ]]; then
  # The JAX MLP block (issue #11's): DeepSeek blocks and the seed rule through the kernel, with
  # GELU inside the down projection's cast (+fused) and without; XLA's own FP8 path beside them.
  echo "== JAX MLP block, GELU fused"
  timeout 500 python3 bench/python/jax_bench.py --part mlp --rounds 5 --variants \
    "bf16,flax-fp8 (XLA),fp8dot-seed-kernel,fp8dot-seed-kernel+fused,fp8dot-blocks-kernel,fp8dot-blocks-kernel+fused" \
    > "$OUT/jax-mlp-gelu.log" 2>&1
  echo "rc $?"; tail -9 "$OUT/jax-mlp-gelu.log"
  exit 0
fi
echo "== C++ CudaQuantize (SwiGlu and Gelu included)"
LD_LIBRARY_PATH=$PWD/build/gelu:$LD_LIBRARY_PATH timeout 200 build/gelu/tests/cuda/cuda_test \
  --gtest_filter='CudaQuantize*' > "$OUT/cpp-quantize-tests.log" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran" "$OUT/cpp-quantize-tests.log" | tail -8
echo "== pytest: gelu, swiglu, activation (cuda cases)"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_quantize.py \
  tests/python/test_torch_layers.py -k "gelu or swiglu or activation" -W ignore::DeprecationWarning \
  > "$OUT/pytest-activations.log" 2>&1
echo "rc $?"; tail -2 "$OUT/pytest-activations.log"
echo "== MLP block, GELU tanh"
timeout 330 python3 bench/python/mlp_block_bench.py --gelu tanh --rounds 5 --variants \
  "bf16,torchao,fp8dot-seed,fp8dot-seed+fused,fp8dot-delayed,fp8dot-delayed+fused" \
  > "$OUT/mlp-block-gelu-tanh.log" 2>&1
echo "rc $?"; tail -9 "$OUT/mlp-block-gelu-tanh.log"
