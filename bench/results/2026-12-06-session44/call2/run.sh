#!/usr/bin/env bash
# One device call (about 6 minutes; no change to the library): on the large GEMMs where the
# plan takes 192x128, that tile against 256x128 and 256x128c2, tensor scales promoted every 128
# (against cuBLASLt's fast GEMM) and A 1x128 x B 128x128 (against cuBLASLt's), interleaved and
# sustained (gpu_bench --sustain 2: each side alone at its own clock, energy per call).
# (Session 44's call 2; it ran as bench/pending/2026-12-06-large-tiles-sustained/run.sh, moved
# here with its shapes and README.) Build here and pack:
#   ninja -C build-gpu gpu_bench && mkdir -p build/carry && cp build-gpu/gpu_bench build/ &&
#   tar cJf build/carry/carry.tar.xz build/gpu_bench
# then carry ["build/carry"], command:
#   tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-06-session44/call2/run.sh
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
here=bench/results/2026-12-06-session44/call2
for config in "fp8 promoted own vs fast" "1x128 x 128x128 own"; do
  name=$([[ $config == fp8* ]] && echo promoted || echo blocks)
  t0=$SECONDS
  timeout 280 build/gpu_bench $here/shapes.txt --sustain 2 --configs "$config" \
    --own-tiles 192x128,256x128,256x128c2 --csv $O/$name.csv > $O/$name.log 2>&1
  echo "$name rc=$? ($((SECONDS - t0)) s)"
done
cp $O/gpu.txt $O/*.log $O/*.csv $OUT/
for name in promoted blocks; do
  echo "== $name, interleaved: M,N,K config own/cuBLASLt"
  sed -n '1,/# Sustained/p' $OUT/$name.log | grep '^| [0-9]' | awk -F'|' '{print $2, $3, $6}'
  echo "== $name, sustained: M,N,K config own/cuBLASLt energy-ratio per-clock"
  sed -n '/# Sustained/,$p' $OUT/$name.log | grep '^| [0-9]' | awk -F'|' '{print $2, $3, $6, $9, $16}'
done
