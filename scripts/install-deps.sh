#!/usr/bin/env bash
# Installs everything fp8dot needs to build and test, from Debian packages and the Python package
# index. Idempotent: does nothing for what is already there. Needs root (or sudo) for apt-get.
set -euo pipefail

# clang + libclang-rt-dev (libFuzzer, only a Recommends of clang): the fuzz targets (scripts/fuzz.sh).
packages=(cmake ninja-build g++ pkg-config libgtest-dev googletest libopenblas-dev
          nlohmann-json3-dev libcli11-dev python3 python3-pip clang libclang-rt-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "install-deps: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The Python package: nanobind + scikit-build-core build it, pytest and torch (the PyPI wheel runs
# on the CPU too) test it.
if ! python3 -c "import nanobind, scikit_build_core, pytest, torch" 2>/dev/null; then
  echo "install-deps: pip install nanobind scikit-build-core pytest torch"
  python3 -m pip install --quiet nanobind scikit-build-core pytest torch 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages nanobind scikit-build-core pytest torch ||
    echo "install-deps: WARNING: could not install the Python package's build/test tools; its tests will be skipped"
fi

# ml_dtypes and numpy: the bit-for-bit agreement and .npy interop tests; matplotlib: the
# accuracy plot (fp8dot accuracy --plot). Their tests are skipped, visibly, without them.
if ! python3 -c "import ml_dtypes, numpy, matplotlib" 2>/dev/null; then
  echo "install-deps: pip install ml_dtypes numpy matplotlib"
  python3 -m pip install --quiet ml_dtypes numpy matplotlib 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages ml_dtypes numpy matplotlib ||
    echo "install-deps: WARNING: could not install ml_dtypes/matplotlib; their tests will be skipped"
fi

# JAX (the CPU build from the package index), Flax and optax: fp8dot.jax / fp8dot.flax and their
# tests (skipped, visibly, without them). jaxlib also ships the XLA FFI headers the handlers build
# against.
if ! python3 -c "import jax, flax, optax" 2>/dev/null; then
  echo "install-deps: pip install jax flax optax"
  python3 -m pip install --quiet jax flax optax 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages jax flax optax ||
    echo "install-deps: WARNING: could not install jax/flax; the JAX tests will be skipped"
fi
