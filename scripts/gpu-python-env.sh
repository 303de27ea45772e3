# Sourced by the GPU machine's Python scripts: installs the fp8dot wheel built here
# (build/wheel-cp312, with the OpenBLAS libraries it links: scripts/build-gpu-carry.sh makes
# both) and the carried peer wheels, if any
# (.whl/: torchao) into /tmp/site, and sets OUT, PYTHONPATH and LD_LIBRARY_PATH.
OUT=${OUT:-/tmp/fp8dot-out}
mkdir -p "$OUT" /tmp/fp8dot-libs
tar xJf build/wheel-cp312/openblas-libs.tar.xz -C /tmp/fp8dot-libs
export LD_LIBRARY_PATH=/tmp/fp8dot-libs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The peer wheels are optional: scripts that do not run torchao need not carry them.
shopt -s nullglob
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl build/wheel-cp312/*.whl || exit 1
shopt -u nullglob
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
# The carried wheel is built with torch (--no-build-isolation): its C++ torch ops must load.
export FP8DOT_EXPECT_NATIVE_TORCH_OPS=1
# JAX shares the GPU with torch in one process (tests, benchmarks): no 75% preallocation.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
