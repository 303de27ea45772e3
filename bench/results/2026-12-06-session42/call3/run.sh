#!/usr/bin/env bash
# Call 3 of session 42: energy per call at the power limit (gpu_bench --sustain: each side alone
# for 4 s in phases A B B A, NVML's energy counter and SM clock). Configs: the own kernel
# promoted every 128 against cuBLASLt's fast GEMM, the own kernel promoted every 1024 against
# cuBLASLt's promoted one, and cuBLASLt's fast GEMM through fp8dot against the direct call (the
# same kernel on both sides: the method's control, ratios near 1). first-method/ holds the
# first run (6 s, with "fp8 promoted own" too), whose energy per call counted the host's gaps
# between batches.
# Build: ninja -C build-gpu gpu_bench && mkdir -p build/carry && cp build-gpu/gpu_bench build/ &&
#   tar cJf build/carry/carry.tar.xz build/gpu_bench
# Carry ["build/carry"]; command "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-session42/call3/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
here=bench/results/2026-12-06-session42/call3
t0=$SECONDS
timeout 420 build/gpu_bench $here/shapes.txt --sustain 4 \
  --configs "fp8 fast,fp8 promoted own vs fast,fp8 promoted own i1024" \
  --csv $O/sustain.csv > $O/sustain.log 2>&1
echo "gpu_bench rc=$? ($((SECONDS - t0)) s)"
cp $O/gpu.txt $O/sustain.log $O/sustain.csv $OUT/
sed -n '/# Sustained/,$p' $O/sustain.log
