#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on the own GEMM kernel and cuBLASLt's kernel for the same
# block-scaled GEMMs, to see what bounds each (tensor pipe, L2, shared memory, stalls). One launch
# of each kernel per shape and tile, after gpu_bench's warm-up. Logs go to $OUT.
#   carry: build/gpu_bench build/wheel-cp312 (OpenBLAS libraries)
# Environment: NCU_SHAPES (lines "M N K", default two M = 4096 shapes), NCU_TILES (comma-separated
#   own tiles, default 256x128), BUILD (default build), NCU_SOURCE=1 (also warp-stall sampling per
#   SASS instruction: the source page as CSV, and bench/sass_stalls.py's summary of where the
#   warps wait, per kernel), NCU_CONFIG (the gpu_bench config of the own kernel, default
#   "1x128 x 128x128 own"; e.g. "1x128 blocks own", "fp8 promoted own") and NCU_CUBLASLT_CONFIG
#   (cuBLASLt's, default "1x128 x 128x128"; e.g. "1x128 blocks", "fp8 fast").
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-own-ncu}
BUILD=${BUILD:-build}
mkdir -p "$OUT" /tmp/fp8dot-libs
tar xJf build/wheel-cp312/openblas-libs.tar.xz -C /tmp/fp8dot-libs
export LD_LIBRARY_PATH=/tmp/fp8dot-libs/lib:$PWD/$BUILD:${LD_LIBRARY_PATH:-}
NCU_TILES=${NCU_TILES:-256x128}
NCU_CONFIG=${NCU_CONFIG:-1x128 x 128x128 own}
NCU_CUBLASLT_CONFIG=${NCU_CUBLASLT_CONFIG:-1x128 x 128x128}
printf '%s\n' "${NCU_SHAPES:-4096 7168 16384
4096 7168 2048}" > "$OUT/shapes.txt"
METRICS=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
METRICS+=,lts__t_bytes.sum.per_second,lts__t_sector_hit_rate.pct,dram__bytes.sum.per_second
METRICS+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed
METRICS+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
METRICS+=,sm__cycles_elapsed.avg.per_second
profile() {  # name, kernel regex, gpu_bench arguments...
  local name=$1 regex=$2; shift 2
  local source=()
  [[ "${NCU_SOURCE:-0}" == 1 ]] && source=(--section SourceCounters -f -o "/tmp/ncu-$name")
  timeout 200 ncu --clock-control none --kernel-name "regex:$regex" --launch-skip 3 \
    --launch-count 1 --metrics "$METRICS" --section WarpStateStats --section SpeedOfLight \
    "${source[@]}" "$BUILD/gpu_bench" "$@" > "$OUT/ncu-$name.log" 2>&1
  echo "ncu $name rc=$?"
  if [[ "${NCU_SOURCE:-0}" == 1 ]]; then
    # With -o the metrics go to the report, not the log: print them from it.
    ncu --import "/tmp/ncu-$name.ncu-rep" --page details >> "$OUT/ncu-$name.log" 2>&1
    ncu --import "/tmp/ncu-$name.ncu-rep" --page source --csv --print-source sass \
      > "$OUT/sass-$name.csv" 2>&1
    python3 bench/sass_stalls.py "$OUT/sass-$name.csv" > "$OUT/stalls-$name.txt" 2>&1
    echo "stalls $name rc=$?"
  fi
}
i=0
while read -r m n k; do
  i=$((i + 1))
  echo "$m $n $k" > "$OUT/shape$i.txt"
  for t in ${NCU_TILES//,/ }; do
    profile "${m}x${n}x${k}-own-$t" block_scaled "$OUT/shape$i.txt" --configs "$NCU_CONFIG" \
      --own-tiles "$t"
  done
  # cuBLASLt's kernel: none of fp8dot's own (gpu_bench also runs its memory-floor kernel first
  # for M <= 128 shapes).
  profile "${m}x${n}x${k}-cublaslt" \
    '^(?!.*(block_scaled|fill|relayout|gather|padded_copy|quantize|memory_floor|epilogue)).*' \
    "$OUT/shape$i.txt" --configs "$NCU_CUBLASLT_CONFIG"
done < "$OUT/shapes.txt"
for f in "$OUT"/ncu-*.log; do
  echo "== $(basename "$f")"
  grep -E "^  [^ ].*\(|gmma_cycles|lts__t_bytes|hit_rate|dram__bytes|wavefronts|gpu__time|sm__throughput|cycles_elapsed|Warp Cycles Per Issued|Stall|==ERR|==WARN" "$f" | head -30
done
for f in "$OUT"/stalls-*.txt; do
  [[ -f "$f" ]] || continue
  echo "== $(basename "$f")"
  head -24 "$f"
done
