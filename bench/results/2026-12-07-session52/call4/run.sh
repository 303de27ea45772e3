#!/usr/bin/env bash
# Session 52, call 4 (~3 min): the own kernel's stage pipeline traced (stage-trace.diff: SM
# clocks per CTA and K-block of the copy thread's wait and issue, math thread 0 seeing the stage
# full and releasing it; FP8DOT_STAGE_TRACE=path writes the last uncaptured launch's trace), on
# the 64-row tiles where call 3 found the own K loop 12-25% slower per block than DeepGEMM's with
# the same tile and stages. gpu_bench's loop launches are traced (each synchronised; the graph
# launches, captured, are not).
# Build: git apply stage-trace.diff && ninja -C build-gpu gpu_bench && cp build-gpu/gpu_bench
#   build/trace/ && git apply -R stage-trace.diff; tar cJf build/carry/trace.tar.xz build/trace
# Carry ["build/carry"]; command
#   "tar xJf build/carry/trace.tar.xz && bash bench/results/2026-12-07-session52/call4/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
here=bench/results/2026-12-07-session52/call4
trace() {  # NAME "M N K" CONFIG TILE
  echo "$2" > /tmp/shape-$1.txt
  local t0=$SECONDS
  FP8DOT_STAGE_TRACE=$O/$1.trace timeout 60 build/trace/gpu_bench /tmp/shape-$1.txt --configs "$3" \
    --own-tiles $4 > $O/$1.log 2>&1
  echo "$1 rc=$? ($((SECONDS - t0)) s) $(ls -la $O/$1.trace 2>/dev/null | awk '{print $5}') bytes"
}
trace block-128-7168 "128 4096 7168" "1x128 x 128x128 own" 64x64
trace promoted-128-7168 "128 4096 7168" "fp8 promoted own vs fast" 64x64
trace block-64-7168 "64 4096 7168" "1x128 x 128x128 own" 64x32
trace block-128-16384 "128 4096 16384" "1x128 x 128x128 own" 64x64
trace block-64-2048 "64 4096 2048" "1x128 x 128x128 own" 64x32
python3 $here/stage_trace.py $O/*.trace | tee $O/summary.md
cp $O/gpu.txt $OUT/
tar czf $OUT/call4.tgz -C $O .
