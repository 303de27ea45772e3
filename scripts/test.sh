#!/usr/bin/env bash
# Builds fp8dot and runs the whole test suite (GPU tests report "Skipped" without a GPU).
# FP8DOT_SANITIZE=1 also builds a CPU-only copy with AddressSanitizer + UBSan and runs it.
# FP8DOT_FUZZ_SECONDS=N also builds the libFuzzer targets (clang) and runs each for N seconds
# (scripts/fuzz.sh); a finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd "${FP8DOT_BUILD_DIR:-build}" && ctest --output-on-failure -j2)

if [[ "${FP8DOT_SANITIZE:-0}" == 1 ]]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer (CPU build)"
  # Without the Python extension: an ASan runtime cannot be loaded into a plain python3.
  FP8DOT_BUILD_DIR=build-sanitize scripts/build.sh -DFP8DOT_SANITIZE=ON -DFP8DOT_CUDA=OFF -DFP8DOT_PYTHON=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j2)
fi

if [[ -n "${FP8DOT_FUZZ_SECONDS:-}" ]]; then
  echo "== libFuzzer targets, ${FP8DOT_FUZZ_SECONDS} s each (scripts/fuzz.sh)"
  scripts/fuzz.sh "$FP8DOT_FUZZ_SECONDS"
fi
