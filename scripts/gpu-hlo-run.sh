#!/usr/bin/env bash
# Runs on the GPU machine: `fp8dot run --backend cuda` on JAX modules (the GPU executor against
# XLA's outputs), and the 8192^3 scaled-dot module: XLA's compiled time vs fp8dot's fused GEMM
# (issue #4's targets). Carry build/fp8dot and build/lib (see gpu-accuracy-and-jax.sh).
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-hlo-run}
BUILD=${BUILD:-build}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$BUILD/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
CLI="$BUILD/fp8dot"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC') commit: ${FP8DOT_COMMIT:?set FP8DOT_COMMIT to the hash the binaries were built at (the device copy has no git history)}" | tee "$OUT/hlo-run.log"

echo "== GPU executor on the H200 JAX exports" | tee -a "$OUT/hlo-run.log"
for m in scaled_dot_f32_default scaled_dot_fp8_output flax_fp8_mlp_grad; do
  n=$(ls examples/jax/h200/$m.in*.npy | wc -l)
  ins=$(for i in $(seq 0 $((n - 1))); do printf "%s," examples/jax/h200/$m.in$i.npy; done)
  timeout 60 "$CLI" run examples/jax/h200/$m.hlo --backend cuda --inputs "${ins%,}" \
    --outputs "/tmp/run-$m" 2>&1 | grep -E "gemm|time|out[0-9]|error" | tee -a "$OUT/hlo-run.log"
  python3 - "$m" <<'PY' | tee -a "$OUT/hlo-run.log"
import glob, sys
import numpy as np, ml_dtypes
m = sys.argv[1]
def load(p):
    a = np.load(p)
    if a.dtype.names:
        a = a[a.dtype.names[0]].view(getattr(ml_dtypes, a.dtype.names[0]))
    return a.astype(np.float64)
for i in range(len(glob.glob(f"examples/jax/h200/{m}.out*.npy"))):
    x, y = load(f"examples/jax/h200/{m}.out{i}.npy"), load(f"/tmp/run-{m}/out{i}.npy")
    print(f"{m} out{i}: relative Frobenius vs XLA {np.linalg.norm(x - y) / max(np.linalg.norm(x), 1e-30):.2e}")
PY
done

echo "== 8192^3: XLA compiled module vs fp8dot" | tee -a "$OUT/hlo-run.log"
timeout 200 python3 examples/jax/time_xla.py /tmp/xla8192 8192 2>&1 | grep xla | tee -a "$OUT/hlo-run.log"
for dtype in bf16 f32; do
  timeout 120 "$CLI" run /tmp/xla8192/scaled_dot_${dtype}_8192.hlo --backend cuda --repeat 5 2>&1 |
    grep -E "rewrite|gemm|time" | tee -a "$OUT/hlo-run.log"
  # Every array on the GPU: the module's time is its GEMM's.
  timeout 120 "$CLI" run /tmp/xla8192/scaled_dot_${dtype}_8192.hlo --backend cuda \
    --device-resident --repeat 20 2>&1 | grep -E "device|time|error" | tee -a "$OUT/hlo-run.log"
done
if [ -x "$BUILD/tests/hlo/device_executor_test" ]; then
  "$BUILD/tests/hlo/device_executor_test" 2>&1 | grep -E "OK|PASSED|FAILED|SKIPPED" | tee -a "$OUT/hlo-run.log"
fi
timeout 60 "$CLI" dot --backend cuda --m 8192 --n 8192 --k 8192 --out-type bf16 \
  --lhs-scale-mode tensor --rhs-scale-mode tensor --no-reference 2>&1 |
  grep -E "time|accumulation" | tee -a "$OUT/hlo-run.log"
