#!/usr/bin/env bash
# On the GPU machine: installs the fp8dot wheel built here (build/wheel-cp312, with the OpenBLAS
# libraries it links) and the carried peer wheels (.whl/: torchao), then runs the Python tests
# and the PyTorch benchmarks. Logs go to $OUT; a short table is printed last.
#   carry: build/wheel-cp312 .whl
# Environment: PYTEST_ARGS (default: the whole tests/python), MLP_ARGS, JAX_ARGS, SKIP_BENCH=1,
# SKIP_TORCH_BENCH=1 (also skips the quantisation kernel benchmark), SKIP_JAX_BENCH=1, SANITIZE=1 (compute-sanitizer memcheck over the GPU
# variants of the JAX and torch tests: the FFI handler and the op on the GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-python-env.sh
python3 -c "import fp8dot, torch, jax; print('fp8dot', fp8dot.__version__, 'GPU', fp8dot.cuda_device(), 'torch', torch.__version__, 'jax', jax.__version__, jax.devices())" | tee "$OUT/versions.log"

echo "== pytest"
python3 -m pytest -q -rs -p no:cacheprovider ${PYTEST_ARGS:-tests/python} -W ignore::DeprecationWarning 2>&1 | tee "$OUT/pytest.log" | tail -25
if [[ "${SANITIZE:-0}" == 1 ]]; then
  echo "== compute-sanitizer memcheck: GPU tests of the JAX FFI handler and the torch op"
  # The JAX cases whose programs hold XLA's own quantisation fusions (-xla-, jnp) crash the
  # sanitized process itself (2026-12-07, bench/results/2026-12-07-session46.md); fp8dot's
  # handlers run in the others.
  compute-sanitizer --tool memcheck --error-exitcode 1 --target-processes all \
    python3 -m pytest -q -p no:cacheprovider -k "gpu and not xla and not jnp" \
    tests/python/test_jax.py 2>&1 | tee "$OUT/sanitizer-jax.log" | tail -4
  echo "compute-sanitizer (JAX handlers) rc=${PIPESTATUS[0]}"
  compute-sanitizer --tool memcheck --error-exitcode 1 --target-processes all \
    python3 -m pytest -q -p no:cacheprovider -k "gpu or cuda" tests/python/test_scaled_dot.py \
    tests/python/test_quantize.py 2>&1 | tee "$OUT/sanitizer-torch.log" | tail -4
  echo "compute-sanitizer (torch ops) rc=${PIPESTATUS[0]}"
fi
if [[ "${SKIP_BENCH:-0}" != 1 && "${SKIP_JAX_BENCH:-0}" != 1 ]]; then
  echo "== JAX: FFI dot vs the C++ plan, Flax MLP block"
  python3 bench/python/jax_bench.py ${JAX_ARGS:-} 2>&1 | tee "$OUT/jax_bench.log" | tail -12
fi
if [[ "${SKIP_BENCH:-0}" != 1 && "${SKIP_TORCH_BENCH:-0}" != 1 ]]; then
  echo "== host cost per call at small M"
  python3 bench/python/small_shape_overhead.py 2>&1 | tee "$OUT/overhead.log"
  echo "== quantisation kernel vs inductor (the MLP block's tensors, then the 300M model's)"
  python3 bench/python/quantize_bench.py 2>&1 | tee "$OUT/quantize_bench.log" | tail -12
  python3 bench/python/quantize_bench.py --suite model --granularities tensor 2>&1 |
    tee "$OUT/quantize_bench_model.log" | tail -7
  echo "== the MLP block's GEMMs alone: fp8dot vs torch._scaled_mm"
  python3 bench/python/gemm_vs_scaled_mm.py 2>&1 | tee "$OUT/gemm_vs_scaled_mm.log" | tail -8
  echo "== MLP block"
  python3 bench/python/mlp_block_bench.py ${MLP_ARGS:-} 2>&1 | tee "$OUT/mlp_block.log" | tail -12
fi
