#!/usr/bin/env bash
# Call 4 of session 42 (run as one command line on the warm machine of call 3, with call 3's
# gpu_bench): the large tiles forced, tensor scales promoted every 128 against cuBLASLt's fast
# GEMM, interleaved and sustained (--sustain 4).
set -u
cd "$(dirname "$0")/../../../.."
printf "16384 16384 16384\n8192 8192 28672\n8192 28672 8192\n28672 8192 8192\n" > /tmp/s.txt
nvidia-smi --query-gpu=name --format=csv > $OUT/gpu.txt
timeout 200 build/gpu_bench /tmp/s.txt --sustain 4 --configs "fp8 promoted own vs fast" \
  --own-tiles 192x128,256x128,256x128c2 --csv $OUT/tiles.csv > $OUT/tiles.log 2>&1
