#!/usr/bin/env bash
# On the development machine (no GPU needed): both sides of the experiment from the checkout as
# it is. build/before/gpu_bench without change.diff; build/gpu_bench, build/tests/cuda/cuda_test
# and build/libfp8dot_c.so with it; all four in build/carry/carry.tar.xz for the GPU call
# (carry ["build/carry"], command "tar xJf build/carry/carry.tar.xz && bash <this folder>/run.sh").
# build-gpu is configured once with: cmake -S . -B build-gpu -G Ninja -DFP8DOT_CUDA=ON
set -eu -o pipefail
cd "$(dirname "$0")/../../.."
here=bench/pending/2026-12-05-wait-closes-body
git diff --quiet -- src || { echo "build.sh: src/ has uncommitted changes" >&2; exit 1; }
ninja -C build-gpu gpu_bench
mkdir -p build/before build/tests/cuda build/carry
cp build-gpu/gpu_bench build/before/
git apply "$here/change.diff"
trap 'git apply -R "$here/change.diff"' EXIT
ninja -C build-gpu gpu_bench cuda_test fp8dot_c
cp build-gpu/gpu_bench build/
cp build-gpu/tests/cuda/cuda_test build/tests/cuda/
cp build-gpu/libfp8dot_c.so build/
tar cJf build/carry/carry.tar.xz build/gpu_bench build/before/gpu_bench \
  build/tests/cuda/cuda_test build/libfp8dot_c.so
ls -la build/carry/carry.tar.xz
