#!/usr/bin/env bash
# Compiler launcher for fp8dot's wgmma kernels: runs the compile command given as arguments
# (with ptxas's -v report) and fails it when ptxas reports a performance advisory (C7510,
# C7514, C7518, ...: "wgmma.mma_async instructions are serialized"). ptxas prints those as
# info, not warnings, so -Werror does not catch them, and one of them alone can halve a kernel's
# speed (../shared/docs/FACTS.md; it did, on the own kernel's outer-scale path, 2026-12-02).
set -uo pipefail
report=$("$@" -Xptxas=-v 2>&1)
status=$?
# Everything but ptxas's per-function resource lines goes through, so real warnings still show.
grep -v -E "^ptxas info +: (Compiling entry|Function properties|Used [0-9]+ registers|[0-9]+ bytes (stack|gmem))|^ +[0-9]+ bytes stack frame" <<<"$report" >&2
if grep -q -E "\(C75[0-9][0-9]\)" <<<"$report"; then
  echo "ptxas performance advisory in an fp8dot wgmma kernel (serialised wgmma): fix the kernel" >&2
  exit 1
fi
exit "$status"
