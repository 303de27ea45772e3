#!/usr/bin/env bash
# Runs on the GPU machine, in one device call: (1) the crafted accumulator probes and the
# accuracy sweep through the CUDA backend, recording golden vectors (issue #5); (2) the JAX/Flax
# exports with XLA's outputs (issue #4; GPU_ACCURACY_SKIP_JAX=1 skips them). Everything lands in
# $OUT/results.tgz plus logs.
#
# Build here first (CUDA on): scripts/build.sh, then
#   mkdir -p build/lib && cp -L /lib/x86_64-linux-gnu/{libopenblas.so.0,libgfortran.so.5,libquadmath.so.0} build/lib/
# and carry build/fp8dot and build/lib.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-accuracy}
BUILD=${BUILD:-build}
WORK=/tmp/fp8dot-results
mkdir -p "$OUT" "$WORK/golden/probe" "$WORK/golden/random" "$WORK/jax"
export LD_LIBRARY_PATH="$PWD/$BUILD/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
CLI="$BUILD/fp8dot"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: ${FP8DOT_COMMIT:?set FP8DOT_COMMIT to the hash the binaries were built at (the device copy has no git history)}"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  python3 -c 'import jax, flax; print("jax", jax.__version__, "flax", flax.__version__)' 2>&1
} | tee "$WORK/summary.txt"

echo "== probe (K=1024, 4096; e4m3 x e4m3 and e4m3 x e5m2)"
for k in 1024 4096; do
  for rhs in f8e4m3fn f8e5m2; do
    timeout 120 "$CLI" probe --backend cuda --length "$k" --rhs-type "$rhs" \
      --record "$WORK/golden/probe" > "$WORK/probe-k$k-$rhs.md" 2>&1
    echo "probe k=$k rhs=$rhs rc=$? ($(tail -1 "$WORK/probe-k$k-$rhs.md"))"
  done
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
mkdir -p "$WORK/golden/random"
timeout 120 "$CLI" accuracy --backend cuda --m 16 --n 16 --k-values 64,256,1024,4096,16384 \
  --distributions symmetric,positive,heavy-tailed,mixed --record "$WORK/golden/random" \
  > "$WORK/golden.md" 2>&1
echo "golden rc=$?"
timeout 120 "$CLI" accuracy --backend cuda --m 16 --n 16 --k-values 65536 \
  --distributions symmetric,positive --record "$WORK/golden/random" >> "$WORK/golden.md" 2>&1
echo "golden K=65536 rc=$?"
timeout 120 "$CLI" accuracy --backend cuda --m 16 --n 16 --rhs-type f8e5m2 \
  --k-values 256,4096,16384 --distributions symmetric,mixed --record "$WORK/golden/random" \
  >> "$WORK/golden.md" 2>&1
echo "golden e5m2 rc=$?"

if [ -n "${GPU_ACCURACY_SKIP_JAX:-}" ]; then
  tar -C "$WORK" -czf "$OUT/results.tgz" .
  cp "$WORK"/*.md "$WORK/summary.txt" "$OUT/" 2>/dev/null
  cat "$WORK/accuracy-e4m3.md"
  exit 0
fi

echo "== JAX/Flax exports"
timeout 200 python3 examples/jax/export_modules.py "$WORK/jax" > "$WORK/jax.log" 2>&1
echo "jax rc=$?"
tail -15 "$WORK/jax.log"

tar -C "$WORK" -czf "$OUT/results.tgz" .
cp "$WORK"/*.md "$WORK/summary.txt" "$OUT/" 2>/dev/null
echo "== tables"
cat "$WORK/probe-k1024-f8e4m3fn.md"
cat "$WORK/accuracy-e4m3.md"
