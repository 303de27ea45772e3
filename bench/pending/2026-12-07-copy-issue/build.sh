#!/usr/bin/env bash
# Builds the binaries run.sh carries (no GPU needed, ~8 min on 2 cores): HEAD (build/before),
# two-copy-threads.diff (build/), cache-hint.diff (build/hint), in build/carry/carry.tar.xz.
set -eu -o pipefail
here=$(realpath "$(dirname "$0")")
cd "$here/../../.."
BEFORE=1 bench/pending/build.sh "$here/two-copy-threads.diff"
git apply "$here/cache-hint.diff"
trap 'git apply -R "$here/cache-hint.diff"' EXIT
ninja -C build-gpu gpu_bench cuda_test
mkdir -p build/hint
cp build-gpu/gpu_bench build-gpu/tests/cuda/cuda_test build/hint/
tar cJf build/carry/carry.tar.xz build/gpu_bench build/tests/cuda/cuda_test build/libfp8dot_c.so \
  build/before/gpu_bench build/before/cuda_test build/hint/gpu_bench build/hint/cuda_test
ls -la build/carry/carry.tar.xz
