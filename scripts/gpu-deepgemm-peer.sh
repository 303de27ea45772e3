#!/usr/bin/env bash
# On the GPU machine: DeepGEMM, the peer of issue #15, beside fp8dot's own engine and cuBLASLt on
# the same operands in one process (bench/python/deepgemm_peer.py, CUDA-graph timing), then
# gpu_bench's own-vs-cuBLASLt table on the same shapes, and with NCU=1 Nsight Compute on the three
# kernels of one shape (warp-stall sampling per SASS instruction, summarised by
# bench/sass_stalls.py). Logs go to $OUT; a short table is printed last.
#   carry: build/wheel-cp312 build/gpu_bench build-tools/deepgemm-2.6.1-pkg.tar.xz
# The DeepGEMM package and the wheel are built on the development machine (it has the H200's
# Python 3.12 and torch 2.11) by scripts/build-gpu-carry.sh (DEEPGEMM=<DeepGEMM 2.6.1 checkout>
# FMT=<fmt checkout>): DeepGEMM with the nvidia-cutlass wheel's headers, which travel with it
# because its JIT compiles against them. Its kernels are compiled on this machine at first use
# (nvcc, a few seconds each; done in parallel first).
# Environment: SHAPES (default bench/deepgemm_shapes.txt), NCU=1, NCU_SHAPE (default
#   "4096 7168 16384"), NCU_KERNELS (kernel-name regexes; default DeepGEMM's, the own, cuBLASLt's),
#   SKIP_PEER=1, SKIP_GPU_BENCH=1.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-deepgemm}
source scripts/gpu-python-env.sh
SHAPES=${SHAPES:-bench/deepgemm_shapes.txt}
mkdir -p /tmp/deepgemm
tar xJf "${DEEPGEMM_PKG:-build-tools/deepgemm-2.6.1-pkg.tar.xz}" -C /tmp/deepgemm || exit 1
export PYTHONPATH=/tmp/deepgemm:$PYTHONPATH DG_JIT_CACHE_DIR=/tmp/deepgemm-cache
# Its extension links libnvrtc and libcudart of CUDA 13 (torch loads its own first where it can).
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
# Without it DeepGEMM's JIT crashes inside std::regex (FACTS.md, "Block-scaled GEMMs").
export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv \
  | tee "$OUT/gpu.txt"
python3 -c "import deep_gemm, fp8dot, torch; print('deep_gemm', deep_gemm.__version__, \
'fp8dot', fp8dot.__version__, 'torch', torch.__version__)" 2>&1 | tee "$OUT/versions.txt"

if [[ "${SKIP_PEER:-0}" != 1 ]]; then
echo "== DeepGEMM's JIT: one process per shape, 8 at a time"
grep -v '^#' "$SHAPES" | grep . > /tmp/deepgemm-shapes.txt
split -l 1 /tmp/deepgemm-shapes.txt /tmp/deepgemm-shape-
ls /tmp/deepgemm-shape-* | DG_PRINT_CONFIGS=1 timeout 300 xargs -P 8 -I{} \
  python3 bench/python/deepgemm_peer.py {} --warm-only > "$OUT/deepgemm-jit.log" 2>&1
echo "jit rc=$?"; grep -c . "$OUT/deepgemm-jit.log"

echo "== DeepGEMM vs own vs cuBLASLt, one process, CUDA graphs"
timeout 400 python3 bench/python/deepgemm_peer.py "$SHAPES" --json "$OUT/deepgemm-peer.jsonl" \
  > "$OUT/deepgemm-peer.md" 2>&1
echo "peer rc=$?"
fi

if [[ "${SKIP_GPU_BENCH:-0}" != 1 ]]; then
  echo "== gpu_bench: own vs cuBLASLt on the same shapes"
  timeout 300 build/gpu_bench "$SHAPES" --configs "1x128 x 128x128 own" \
    --csv "$OUT/gpu-bench.csv" > "$OUT/gpu-bench.md" 2>&1
  echo "gpu_bench rc=$?"
fi

if [[ "${NCU:-0}" == 1 ]]; then
  echo "${NCU_SHAPE:-4096 7168 16384}" > /tmp/deepgemm-ncu-shape.txt
  for kernel in ${NCU_KERNELS:-sm90_fp8_gemm_1d2d_impl block_scaled_gemm_kernel nvjet}; do
    # The first launch is the comparison's eager call (DeepGEMM's kernel is compiled by then).
    timeout 200 ncu --clock-control none --kernel-name "regex:$kernel" --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SourceCounters \
      --section MemoryWorkloadAnalysis -f -o "/tmp/ncu-$kernel" \
      python3 bench/python/deepgemm_peer.py /tmp/deepgemm-ncu-shape.txt --rounds 1 --calls 1 \
      > "$OUT/ncu-$kernel.log" 2>&1
    echo "ncu $kernel rc=$?"
    ncu --import "/tmp/ncu-$kernel.ncu-rep" --page details > "$OUT/ncu-$kernel-details.txt" 2>&1
    ncu --import "/tmp/ncu-$kernel.ncu-rep" --page source --csv --print-source sass \
      > "/tmp/sass-$kernel.csv" 2>&1
    python3 bench/sass_stalls.py "/tmp/sass-$kernel.csv" --top 12 > "$OUT/stalls-$kernel.txt" 2>&1
    echo "stalls $kernel rc=$?"
  done
fi

echo "== summary"
[[ -f "$OUT/deepgemm-peer.md" ]] && grep -E "^\| |^\|---" "$OUT/deepgemm-peer.md" | head -24
[[ -f "$OUT/gpu-bench.md" ]] && cut -d'|' -f2-6 "$OUT/gpu-bench.md" | grep -v "^-" | head -22
for f in "$OUT"/ncu-*-details.txt; do
  [[ -f "$f" ]] || continue
  echo "== $(basename "$f")"
  grep -E "^  [^ ].*\(|Duration|SM Frequency|Compute \(SM\)|L2 Cache Throughput|Warp Cycles Per Issued" "$f" | head -8
done
for f in "$OUT"/stalls-*.txt; do
  [[ -f "$f" ]] || continue
  echo "== $(basename "$f")"
  head -${STALL_LINES:-14} "$f"
done
if [[ "${NCU:-0}" == 1 ]]; then
  # Few files come back from the GPU machine: the profiles travel as one archive (after the
  # summary above has read them).
  (cd "$OUT" && tar -cJf ncu.tar.xz ncu-* stalls-* && rm -f ncu-*.txt ncu-*.log)
fi
