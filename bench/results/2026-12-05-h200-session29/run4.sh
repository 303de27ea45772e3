#!/usr/bin/env bash
# Session 29, call 4: DeepGEMM 2.6.1 (54e2261) beside fp8dot's own engine and cuBLASLt on
# DeepGEMM's 18 shapes, one process, CUDA graphs (scripts/gpu-deepgemm-peer.sh), with this
# session's wheel: #15's ">= DeepGEMM on every shape" and ">= 1.3x / 1.1x cuBLASLt" re-measured.
#   carry: build/wheel-cp312, build-tools (deepgemm-2.6.1-pkg.tar.xz)
set -u
cd "$(dirname "$0")/../../.."
O=$OUT/o; mkdir -p $O
OUT=$O SKIP_GPU_BENCH=1 timeout 540 bash scripts/gpu-deepgemm-peer.sh > $O/peer-run.log 2>&1
echo "peer script rc=$?"
tail -25 $O/deepgemm-peer.md
