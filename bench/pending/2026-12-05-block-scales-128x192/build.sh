#!/usr/bin/env bash
# On the development machine (no GPU needed): gpu_bench, cuda_test and libfp8dot_c.so with
# change.diff applied (COMBINED=1: combined-with-wait-closes-body.diff, both pending changes),
# packed in build/carry/carry.tar.xz for the GPU call (carry ["build/carry"], command
# "tar xJf build/carry/carry.tar.xz && bash <this folder>/run.sh"). The plan's tiles are the same
# with and without it (it takes 128x192 with block scales only when asked), so one build serves
# both sides of the comparison.
# build-gpu is configured once with: cmake -S . -B build-gpu -G Ninja -DFP8DOT_CUDA=ON
set -eu -o pipefail
cd "$(dirname "$0")/../../.."
here=bench/pending/2026-12-05-block-scales-128x192
diff=$here/change.diff
[[ "${COMBINED:-0}" == 1 ]] && diff=$here/combined-with-wait-closes-body.diff
git diff --quiet -- src tests docs || { echo "build.sh: uncommitted changes" >&2; exit 1; }
git apply "$diff"
trap 'git apply -R "$diff"' EXIT
ninja -C build-gpu gpu_bench cuda_test fp8dot_c
mkdir -p build/tests/cuda build/carry
cp build-gpu/gpu_bench build/
cp build-gpu/tests/cuda/cuda_test build/tests/cuda/
cp build-gpu/libfp8dot_c.so build/
tar cJf build/carry/carry.tar.xz build/gpu_bench build/tests/cuda/cuda_test build/libfp8dot_c.so
ls -la build/carry/carry.tar.xz
