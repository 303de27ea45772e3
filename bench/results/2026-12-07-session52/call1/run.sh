#!/usr/bin/env bash
# One device call (~6 min): tile-176.diff (README.md says why), a 128x176 tile for tensor and
# row scales. First the own GEMM's GPU tests (the new tile among the outer-scaled ones); then,
# two rounds each, against cuBLASLt's fast GEMM in the same batches, with tensor scales promoted
# every 128: 4096x2112x7168 with 192x128 (the plan before), 128x176 (the plan after), 128x192
# and 256x128 forced; 128x7168x16384 with 128x176s3 (the H200 model's pick after), 128x128s2
# (before), 128x192s3 and 128x64; the plan before and after on both shapes; racecheck and
# synccheck on the outer-scaled test last.
# Build here: BEFORE=1 bench/pending/build.sh bench/pending/2026-12-07-tile-176/tile-176.diff
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-tile-176/run.sh"
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
here=bench/pending/2026-12-07-tile-176
config="fp8 promoted own vs fast"
own_gemm_tests 150
run() {  # LABEL SECONDS BENCH gpu_bench-arguments...
  local label=$1 limit=$2 bench=$3 t0=$SECONDS
  shift 3
  timeout "$limit" "$bench" "$@" --configs "$config" --csv "$O/$label.csv" > "$O/$label.log" 2>&1
  echo "$label rc=$? ($((SECONDS - t0)) s)"
}
cat $here/shape-2112.txt $here/shape-128.txt > /tmp/plan-shapes.txt
for round in 1 2; do
  run tiles-2112-$round 60 build/gpu_bench $here/shape-2112.txt \
    --own-tiles 192x128,128x176,128x192,256x128
  run tiles-128-$round 60 build/gpu_bench $here/shape-128.txt \
    --own-tiles 128x176s3,128x128s2,128x192s3,128x64
  run plan-before-$round 40 build/before/gpu_bench /tmp/plan-shapes.txt
  run plan-after-$round 40 build/gpu_bench /tmp/plan-shapes.txt
done
pack() { cp "$O/gpu.txt" "$OUT/" && tar czf "$OUT/tile-176.tgz" -C "$O" .; }
pack
echo "== M,N,K | config | own / cuBLASLt fast (loop) | (graph) | note, per log"
for f in "$O"/tiles-*.log "$O"/plan-*.log; do
  echo "-- $(basename "$f" .log)"
  grep '^| [0-9]' "$f" | awk -F'|' '{print $2 "|" $3 "|" $6 "|" $9 "|" $14}'
done
own_gemm_sanitizers 'CudaOwnGemmTest.OuterScalesWithAnyPromotionIntervalAreBitIdenticalToTheEmulation'
pack
