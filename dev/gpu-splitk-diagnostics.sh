#!/usr/bin/env bash
# Runs on the GPU machine (carry build/fp8dot and build/lib): the split-K boundary probes of
# dev/splitk_boundary_probe.py at the accuracy-sweep shapes, the plans cuBLASLt picks for them,
# and cuBLASLt's API log for torch._scaled_mm and fp8dot on the shapes where torch is faster.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fp8dot-splitk}
mkdir -p "$OUT/probe"
export LD_LIBRARY_PATH="$PWD/build/lib:${LD_LIBRARY_PATH:-}"
CLI=build/fp8dot
probe() {  # M K OFFSETS...
  local m=$1 k=$2; shift 2
  python3 dev/splitk_boundary_probe.py gen "$OUT/probe" "$m" "$k" "$@"
  for offset in "$@"; do
    local stem="$OUT/probe/m${m}_k${k}_o${offset}"
    local explain=()
    [ "$offset" = "$1" ] && explain=(--explain)
    "$CLI" dot --backend cuda --lhs "$stem.lhs.npy" --rhs "$stem.rhs.npy" --out-type f32 \
      --output "$stem.out.npy" --no-reference "${explain[@]}" > "$stem.log" 2>&1 || echo "FAILED $stem"
    grep -h "algorithm:" "$stem.log" | sed "s|^|m=$m k=$k: |"
    rm -f "$stem.lhs.npy" "$stem.rhs.npy"
  done
}
probe 16 4096 0
probe 16 16384 0 128 256 384 512 640 768 896
probe 16 65536 0 1024 2048 3072
probe 64 16384 0 128
probe 64 65536 0 256 512 768
probe 64 262144 0 1024 2048 3072
python3 dev/splitk_boundary_probe.py analyze "$OUT/probe" | tee "$OUT/splitk-boundaries.txt"

echo "== cuBLASLt API log: torch._scaled_mm vs fp8dot"
for shape in "4096 4096 4096" "4096 2112 7168" "128 4096 7168"; do
  set -- $shape
  CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE="$OUT/lt-torch-$1x$2x$3.log" python3 - "$1" "$2" "$3" <<'PY'
import sys, torch
m, n, k = (int(x) for x in sys.argv[1:])
a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
one = torch.ones((), device="cuda")
for _ in range(3):
    torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
torch.cuda.synchronize()
PY
  CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE="$OUT/lt-fp8dot-$1x$2x$3.log" "$CLI" dot --backend cuda \
    --m "$1" --n "$2" --k "$3" --out-type bf16 --lhs-scale-mode tensor --rhs-scale-mode tensor \
    --no-reference --explain > "$OUT/explain-$1x$2x$3.log" 2>&1
  echo "-- $shape torch:"; grep -m3 -i "cublasLtMatmul(" "$OUT/lt-torch-$1x$2x$3.log" | cut -c1-2000
  echo "-- $shape fp8dot:"; grep -m3 -i "cublasLtMatmul(" "$OUT/lt-fp8dot-$1x$2x$3.log" | cut -c1-2000
  grep "algorithm:" "$OUT/explain-$1x$2x$3.log"
done
