#!/usr/bin/env bash
# Checks fp8dot's f32 -> {f8e4m3fn, f8e5m2, f16, bf16} conversion for all 2^32 f32 bit patterns
# against the independent reference in tests/core/codec_reference.h. Minutes of CPU: not in CI
# (CI runs the boundaries, ties, subnormals and 2^20 random patterns per type instead).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
FP8DOT_EXHAUSTIVE=1 "${FP8DOT_BUILD_DIR:-build}/tests/core_test" \
  --gtest_filter=FloatCodecTest.ExhaustiveF32MatchesReference
