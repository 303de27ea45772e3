#!/usr/bin/env bash
# On the development machine (no GPU needed): the binaries of one pending experiment, from the
# checkout as it is with DIFF applied (build/gpu_bench, build/tests/cuda/cuda_test,
# build/libfp8dot_c.so) and, with BEFORE=1, build/before/gpu_bench and build/before/cuda_test
# without it; all of them in
# build/carry/carry.tar.xz for the GPU call (carry ["build/carry"], command
# "tar xJf build/carry/carry.tar.xz && bash <the experiment's folder>/run.sh").
#   [BEFORE=1] bench/pending/build.sh DIFF
# build-gpu is configured once with: cmake -S . -B build-gpu -G Ninja -DFP8DOT_CUDA=ON
set -eu -o pipefail
[[ $# == 1 && -f $1 ]] || { echo "usage: [BEFORE=1] $0 DIFF" >&2; exit 2; }
diff=$(realpath "$1")
cd "$(dirname "$0")/../.."
git diff --quiet -- src tests docs || { echo "build.sh: uncommitted changes" >&2; exit 1; }
mkdir -p build/before build/tests/cuda build/carry
carried=(build/gpu_bench build/tests/cuda/cuda_test build/libfp8dot_c.so)
if [[ "${BEFORE:-0}" == 1 ]]; then
  ninja -C build-gpu gpu_bench cuda_test
  cp build-gpu/gpu_bench build-gpu/tests/cuda/cuda_test build/before/
  carried+=(build/before/gpu_bench build/before/cuda_test)
fi
git apply "$diff"
trap 'git apply -R "$diff"' EXIT
ninja -C build-gpu gpu_bench cuda_test fp8dot_c
cp build-gpu/gpu_bench build/
cp build-gpu/tests/cuda/cuda_test build/tests/cuda/
cp build-gpu/libfp8dot_c.so build/
tar cJf build/carry/carry.tar.xz "${carried[@]}"
ls -la build/carry/carry.tar.xz
