#!/usr/bin/env bash
# One device call (about 9 minutes): the SwiGLU product quantised inside the down projection's
# FP8 cast (Linear.swiglu, QuantizeActivation::kSwiGlu), committed in 7100e3f..HEAD but never
# run on a GPU. CALL=1 (default): the C++ bit-identity tests, the CUDA pytest cases, the kernel
# against inductor's SiLU·up + fp8dot's cast, and the 300M model with fp8dot's delayed seed
# recipe fused and unfused. CALL=2: the model A/B again, interleaved, with torchao's seed rule.
#   carry: build/wheel-cp312 .whl build/tests/cuda/cuda_test build/libfp8dot_c.so
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/gpu-python-env.sh >/dev/null
model_run() {  # name, then train.py flags; 40 steps of the h200-300m config, compiled
  local name=$1; shift
  echo "== model $name"
  timeout 240 python3 examples/train/train.py --compile --config h200-300m --steps 40 "$@" \
    --log "$OUT/train-$name.jsonl" > "$OUT/train-$name.out" 2>&1
  echo "exit $?"; grep -E '"summary"' "$OUT/train-$name.out" | python3 -c \
    'import json,sys; s=json.loads(sys.stdin.read()); print(s["label"], round(s["ms_per_step"], 2), "ms/step, val", round(s["final_val_loss"], 4))'
}
if [[ ${CALL:-1} == 1 ]]; then
  echo "== C++ CudaQuantize (SwiGlu included)"
  LD_LIBRARY_PATH=$PWD/build:$LD_LIBRARY_PATH timeout 200 build/tests/cuda/cuda_test \
    --gtest_filter='CudaQuantize*' > "$OUT/cpp-quantize-tests.log" 2>&1
  echo "rc $?"; grep -E "OK|FAILED" "$OUT/cpp-quantize-tests.log" | tail -8
  echo "== pytest: swiglu (cuda cases)"
  timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_quantize.py \
    tests/python/test_torch_layers.py -k swiglu -W ignore::DeprecationWarning \
    > "$OUT/pytest-swiglu.log" 2>&1
  echo "rc $?"; tail -2 "$OUT/pytest-swiglu.log"
  echo "== the kernel: fused against inductor's SiLU·up + fp8dot's cast"
  timeout 120 python3 bench/python/swiglu_quantize_bench.py --json "$OUT/swiglu-bench.json" \
    2>&1 | tee "$OUT/swiglu-bench.log" | tail -8
  model_run delayed-fused --linear fp8dot --recipe delayed
  model_run delayed-unfused --linear fp8dot --recipe delayed --unfused-swiglu
else
  model_run torchao-seed --linear torchao --recipe seed
  model_run delayed-unfused-2 --linear fp8dot --recipe delayed --unfused-swiglu
  model_run delayed-fused-2 --linear fp8dot --recipe delayed
fi
(cd "$OUT" && tar -czf train-logs.tgz train-*.jsonl train-*.out 2>/dev/null && rm -f train-*.jsonl train-*.out)
