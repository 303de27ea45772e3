#!/usr/bin/env bash
# On the GPU machine: the quantisation kernel's tests (C++ bit-identity with the CPU, Python
# quantise and delayed-scaling layer tests), its Nsight Compute instruction count and time on
# six calls (bench/python/quantize_ncu_calls.py), quantize_bench on the model's and the MLP
# block's tensors, and the MLP block (MLP=0 skips it; VARIANTS picks its variants). Logs to $OUT.
# BEFORE_WHEEL=<wheel folder of the base commit> also times the cast under Nsight Compute with
# both builds (scripts/gpu-python-before-after.sh).
#   carry: build/wheel-cp312 .whl build/tests/cuda/cuda_test build/libfp8dot_c.so
#          (and BEFORE_WHEEL's folder)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-python-env.sh >/dev/null
echo "== C++ CudaQuantize"
LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH timeout 200 build/tests/cuda/cuda_test \
  --gtest_filter='CudaQuantize*' > "$OUT/cpp-quantize-tests.log" 2>&1
echo "rc $?"; tail -3 "$OUT/cpp-quantize-tests.log"
echo "== pytest: quantisation, delayed scaling, CUDA layers"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_quantize.py \
  tests/python/test_torch_layers.py -k "quantiz or delayed or amax or cuda" \
  -W ignore::DeprecationWarning > "$OUT/pytest-quantize.log" 2>&1
echo "rc $?"; tail -2 "$OUT/pytest-quantize.log"
echo "== Nsight Compute: the cast kernel's six calls"
ncu_calls=(ncu --clock-control none --kernel-name regex:quantize_cast --launch-count 6
  --section SpeedOfLight --metrics smsp__inst_executed.sum
  python3 bench/python/quantize_ncu_calls.py)
timeout 120 "${ncu_calls[@]}" > "$OUT/ncu.log" 2>&1
grep -E "Duration|DRAM Throughput|Compute \(SM\)|inst_executed.sum" "$OUT/ncu.log"
if [[ -n "${BEFORE_WHEEL:-}" ]]; then
  # The cast's code generation is fragile (docs/quantize.md): its durations, before and after,
  # three rounds in alternating processes.
  echo "== Nsight Compute durations (us), before and after (BEFORE_WHEEL=$BEFORE_WHEEL)"
  ROUNDS=3 scripts/gpu-python-before-after.sh ncu timeout 120 "${ncu_calls[@]}" >/dev/null
  for log in "$OUT"/ncu-before-*.log "$OUT"/ncu-after-*.log; do
    echo "$(basename "$log" .log): $(grep -E '^ +Duration' "$log" | awk '{printf "%s ", $3}')"
  done
fi
echo "== quantize_bench"
timeout 100 python3 bench/python/quantize_bench.py --suite model --granularities tensor \
  --rounds 3 > "$OUT/q-model.log" 2>&1
tail -17 "$OUT/q-model.log"
timeout 100 python3 bench/python/quantize_bench.py --suite mlp \
  --granularities tensor,1x128,128x128 --rounds 3 > "$OUT/q-mlp.log" 2>&1
tail -15 "$OUT/q-mlp.log"
if [[ "${MLP:-1}" == 1 ]]; then
  echo "== MLP block"
  timeout 330 python3 bench/python/mlp_block_bench.py \
    --variants "${VARIANTS:-bf16,fp8dot-seed,fp8dot-delayed,fp8dot-fast-delayed,torchao}" \
    --rounds 3 --steps 20 > "$OUT/mlp.log" 2>&1
  tail -8 "$OUT/mlp.log"
fi
