#!/usr/bin/env bash
# The main demo: the same FP8 dot with DEFAULT and with HIGHEST precision, on the GPU when there
# is one and on the CPU (which emulates Hopper's accumulation) otherwise; then the accuracy of
# the two modes as K grows; then the same from Python (numpy, an FP8 torch model, and JAX).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cli=${FP8DOT_BUILD_DIR:-build}/fp8dot

echo
echo "== Forward pass: operand_precision={default,default} -> fast accumulation"
"$cli" dot --m 256 --n 256 --k 4096 --distribution positive --precision default,default --backend auto
echo
echo "== Gradient: operand_precision={highest,highest} -> promoted accumulation"
"$cli" dot --m 256 --n 256 --k 4096 --distribution positive --precision highest,highest --backend auto
echo
echo "== Error of fast vs promoted accumulation as K grows"
"$cli" accuracy --k-values 256,1024,4096,16384 --distributions symmetric,positive --backend auto
echo
echo "== The same from Python (fp8dot package, numpy and torch; examples/python/quickstart.py)"
if [[ -d "${FP8DOT_BUILD_DIR:-build}/python/fp8dot" ]]; then
  PYTHONPATH=${FP8DOT_BUILD_DIR:-build}/python python3 examples/python/quickstart.py
  echo
  echo "== In JAX: fp8dot inside jax.jit (examples/python/jax_quickstart.py)"
  if python3 -c "import jax" 2>/dev/null; then
    PYTHONPATH=${FP8DOT_BUILD_DIR:-build}/python python3 examples/python/jax_quickstart.py
  else
    echo "skipped: JAX is not installed"
  fi
else
  echo "skipped: the Python extension was not built (no nanobind)"
fi
