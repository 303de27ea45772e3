#!/usr/bin/env bash
# Builds here what the GPU machine's Python scripts carry (it has Python 3.12 and torch 2.11, no
# OpenBLAS, no compiler for our package):
#   build/wheel-cp312/   the fp8dot wheel for Python 3.12, built against torch (its C++ torch ops
#                        are in it), and openblas-libs.tar.xz, the OpenBLAS runtime it links
#                        (scripts/gpu-python-env.sh unpacks it there);
#   build-tools/deepgemm-2.6.1-pkg.tar.xz   with DEEPGEMM=<checkout of deepseek-ai/DeepGEMM 2.6.1>
#                        and FMT=<checkout of fmtlib/fmt>: DeepGEMM with the CUTLASS headers of the
#                        nvidia-cutlass 4.2 wheel, for scripts/gpu-deepgemm-peer.sh.
# Environment: PYTHON312 (default python3.12; it needs torch==2.11.0, jax==0.11.2 (the XLA FFI
#   headers: without jaxlib the wheel has no JAX handlers), nanobind, scikit-build-core, numpy
#   and ml_dtypes: `PYTHON312 -m pip install torch==2.11.0 jax==0.11.2 nanobind
#   scikit-build-core numpy ml_dtypes`), DEEPGEMM, FMT, SKIP_WHEEL=1.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON312=${PYTHON312:-python3.12}
"$PYTHON312" -c "import torch, jax, nanobind, scikit_build_core" || {
  echo "build-gpu-carry: $PYTHON312 needs torch 2.11, jax 0.11.2, nanobind and scikit-build-core" >&2
  exit 1
}

if [[ "${SKIP_WHEEL:-0}" != 1 ]]; then
  rm -rf build/wheel-cp312
  "$PYTHON312" -m pip wheel . --no-build-isolation --no-deps -w build/wheel-cp312
  libs=$(mktemp -d)
  mkdir -p "$libs/lib"
  for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
    cp -L "/lib/x86_64-linux-gnu/$lib" "$libs/lib/"
  done
  tar cJf build/wheel-cp312/openblas-libs.tar.xz -C "$libs" lib
  rm -rf "$libs"
  ls -l build/wheel-cp312
fi

if [[ -n "${DEEPGEMM:-}" ]]; then
  [[ -n "${FMT:-}" ]] || { echo "build-gpu-carry: DEEPGEMM needs FMT too" >&2; exit 1; }
  work=$(mktemp -d)
  git clone -q "$DEEPGEMM" "$work/deepgemm"
  "$PYTHON312" -m pip download --no-deps nvidia-cutlass==4.2.0 -d "$work/cutlass" -q
  (cd "$work/cutlass" && unzip -q ./*.whl)
  cd "$work/deepgemm"
  rm -rf third-party/cutlass third-party/fmt
  mkdir -p third-party/cutlass third-party/fmt
  cp -r "$work/cutlass/cutlass_library/source/include" third-party/cutlass/
  git -C "$FMT" archive HEAD include | tar x -C third-party/fmt
  DG_USE_LOCAL_VERSION=0 CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} \
    "$PYTHON312" setup.py build_ext --inplace > "$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log"; exit 1; }
  # Its JIT compiles kernels against CUTLASS on the GPU machine: the headers travel with it.
  cp -r third-party/cutlass/include/cute third-party/cutlass/include/cutlass deep_gemm/include/
  strip --strip-debug deep_gemm/_C*.so
  cd - > /dev/null
  mkdir -p build-tools
  tar cJf build-tools/deepgemm-2.6.1-pkg.tar.xz -C "$work/deepgemm" deep_gemm
  rm -rf "$work"
  ls -l build-tools/deepgemm-2.6.1-pkg.tar.xz
fi
