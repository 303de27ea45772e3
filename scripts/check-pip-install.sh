#!/usr/bin/env bash
# What a new user does: `pip install .` into a fresh virtual environment (CPU-only, as on a machine
# without a GPU), `import fp8dot` from outside the source tree, then the Python tests against the
# installed package. The venv sees the system's site-packages for torch (not reinstalled).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${FP8DOT_VENV:-/tmp/fp8dot-pip-venv}
rm -rf "$venv"
python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet . -C cmake.define.FP8DOT_CUDA=OFF \
  -C build-dir=build/pip-check
(cd /tmp && "$venv/bin/python" -c "import fp8dot; print('import fp8dot:', fp8dot.__version__, fp8dot.__file__)")
# The wheel carries the XLA FFI handlers (jaxlib is a build requirement).
(cd /tmp && "$venv/bin/python" -c "import fp8dot._core as c; assert hasattr(c, 'xla_ffi_handlers'), 'no XLA FFI handlers in the wheel'")
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider -W ignore::DeprecationWarning \
  tests/python/test_scaled_dot.py tests/python/test_jax.py
