#!/usr/bin/env bash
# Where split-K's time goes at small M (binaries of 569a1f2): Nsight Compute with warp-stall
# sampling per SASS instruction on the own kernel promoted every 128 at 128x4096x7168, split
# (128x128s4, 64x128s4) and not (128x32, 128x128), and cuBLASLt's fast GEMM beside it.
# Carry ["build/carry"]; command
# "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-h100-session40/call1/run.sh".
set -u
# Not gpu-call-setup.sh: the carry has OpenBLAS's libraries (which the script needs) but no wheel.
O=$OUT/o && mkdir -p $O && nvidia-smi > $O/gpu.txt
NCU_SOURCE=1 NCU_SHAPES="128 4096 7168" NCU_TILES=128x128s4,64x128s4,128x32,128x128 \
  NCU_CONFIG="fp8 promoted own" NCU_CUBLASLT_CONFIG="fp8 fast" OUT=$O \
  bash scripts/gpu-own-gemm-ncu.sh > $O/ncu-summary.txt 2>&1
echo "rc=$?"
grep -E "^== |gpu__time|dram__bytes|lts__t_bytes|gmma" $O/ncu-summary.txt | head -60
tar czf $OUT/logs.tgz -C $O . && rm -rf $O
