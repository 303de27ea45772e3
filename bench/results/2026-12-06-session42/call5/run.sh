#!/usr/bin/env bash
# Call 5 of session 42 (one command line, call 3's gpu_bench, the same H100 as calls 3-4):
# 192x128 against 256x128c2 for both scalings, interleaved and sustained (--sustain 3).
set -u
cd "$(dirname "$0")/../../../.."
printf "16384 16384 16384\n8192 8192 28672\n8192 8192 8192\n" > /tmp/s.txt
timeout 150 build/gpu_bench /tmp/s.txt --sustain 3 --configs "1x128 x 128x128 own,fp8 promoted own vs fast" \
  --own-tiles 192x128,256x128c2 --csv $OUT/tiles2.csv > $OUT/tiles2.log 2>&1
