#!/usr/bin/env bash
# #15's promoted target after the wait change (binaries of 7faf285): the own kernel (plan) and a
# tuned plan (both engines raced) promoted every 128 against cuBLASLt's fast GEMM, on the suite.
# Carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session39/call8/run.sh".
set -u
source scripts/gpu-call-setup.sh
timeout 400 build/gpu_bench bench/shapes.txt --configs "fp8 promoted own vs fast,fp8 promoted tuned vs fast" \
  --csv $O/promoted.csv > $O/promoted.log 2>&1
echo "rc=$?"; grep -E "^\| [0-9]" $O/promoted.log | cut -d'|' -f2-6,8-9
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
