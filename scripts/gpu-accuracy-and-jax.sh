#!/usr/bin/env bash
# Runs on the GPU machine, in one device call: (1) the crafted accumulator probes and the
# accuracy sweep through the CUDA backend, recording golden vectors (issue #5); (2) the JAX/Flax
# exports with XLA's outputs (issue #4). Everything lands in $OUT/results.tgz plus logs.
#
# Build here first (CUDA on): scripts/build.sh, then
#   mkdir -p build/lib && cp -L /lib/x86_64-linux-gnu/{libopenblas.so.0,libgfortran.so.5,libquadmath.so.0} build/lib/
# and carry build/fp8dot and build/lib.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-accuracy}
BUILD=${BUILD:-build}
WORK=/tmp/fp8dot-results
mkdir -p "$OUT" "$WORK/golden" "$WORK/probe" "$WORK/jax"
export LD_LIBRARY_PATH="$PWD/$BUILD/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
CLI="$BUILD/fp8dot"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: ${FP8DOT_COMMIT:?set FP8DOT_COMMIT to the hash the binaries were built at (the device copy has no git history)}"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  python3 -c 'import jax, flax; print("jax", jax.__version__, "flax", flax.__version__)' 2>&1
} | tee "$WORK/summary.txt"

echo "== probe (K=1024, 4096)"
for k in 1024 4096; do
  mkdir -p "$WORK/probe/k$k"
  timeout 120 "$CLI" probe --backend cuda --length "$k" --record "$WORK/probe/k$k" \
    > "$WORK/probe-k$k.md" 2>&1
  echo "probe k=$k rc=$?"
done

echo "== accuracy sweep (M=N=64), e4m3 x e4m3 and e4m3 x e5m2"
timeout 200 "$CLI" accuracy --backend cuda --m 64 --n 64 \
  --k-values 16,64,256,1024,4096,16384,65536,262144 \
  --distributions symmetric,positive,heavy-tailed,mixed --csv "$WORK/accuracy-e4m3.csv" \
  > "$WORK/accuracy-e4m3.md" 2>&1
echo "accuracy e4m3 rc=$?"
timeout 120 "$CLI" accuracy --backend cuda --m 64 --n 64 --rhs-type f8e5m2 \
  --k-values 256,4096,65536 --distributions symmetric,positive --csv "$WORK/accuracy-e5m2.csv" \
  > "$WORK/accuracy-e5m2.md" 2>&1
echo "accuracy e5m2 rc=$?"

echo "== golden vectors (M=N=16)"
timeout 120 "$CLI" accuracy --backend cuda --m 16 --n 16 --k-values 64,256,1024,4096,16384 \
  --distributions symmetric,positive,heavy-tailed,mixed --record "$WORK/golden" \
  > "$WORK/golden.md" 2>&1
echo "golden rc=$?"

echo "== JAX/Flax exports"
timeout 200 python3 examples/jax/export_modules.py "$WORK/jax" > "$WORK/jax.log" 2>&1
echo "jax rc=$?"
tail -15 "$WORK/jax.log"

tar -C "$WORK" -czf "$OUT/results.tgz" .
cp "$WORK"/*.md "$WORK/summary.txt" "$OUT/" 2>/dev/null
echo "== tables"
cat "$WORK/probe-k1024.md"
cat "$WORK/accuracy-e4m3.md"
