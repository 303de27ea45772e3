#!/usr/bin/env bash
# Builds the binaries run.sh carries (no GPU needed, ~11 min on 2 cores): HEAD (build/before),
# two-copy-threads.diff (build/), cache-hint.diff (build/hint), and session 51's
# whole-producer-warps.diff (kept with its results) with cache-hint.diff (build/whole-hint), in
# build/carry/carry.tar.xz.
set -eu -o pipefail
here=$(realpath "$(dirname "$0")")
cd "$here/../../.."
BEFORE=1 bench/pending/build.sh "$here/two-copy-threads.diff"
variant() {  # FOLDER DIFF...: the binaries with the diffs (paths from the root) applied
  local folder=$1 diff
  shift
  for diff; do git apply "$diff"; done
  ninja -C build-gpu gpu_bench cuda_test || { git checkout src; return 1; }
  mkdir -p "build/$folder"
  cp build-gpu/gpu_bench build-gpu/tests/cuda/cuda_test "build/$folder/"
  git checkout src
}
variant hint "$here/cache-hint.diff"
variant whole-hint bench/results/2026-12-07-session51/call1/whole-producer-warps.diff \
  "$here/cache-hint.diff"
tar cJf build/carry/carry.tar.xz build/gpu_bench build/tests/cuda/cuda_test build/libfp8dot_c.so \
  build/before/gpu_bench build/before/cuda_test build/hint/gpu_bench build/hint/cuda_test \
  build/whole-hint/gpu_bench build/whole-hint/cuda_test
ls -la build/carry/carry.tar.xz
