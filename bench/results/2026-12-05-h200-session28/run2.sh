#!/usr/bin/env bash
# Session 28, call 2: the JAX command-buffer / shard_map tests call 1 ran out of time for; B 1x128
# on 256x128 and 192x128, the build at HEAD against one whose 192x128 warpgroups take turns with
# column scales (v1), alternating; where the JAX MLP block's time goes (GPU idle per step); and
# Nsight Compute's stall sampling of the B 1x128 256x128 kernel beside cuBLASLt's 1x128 GEMM.
#   carry: build/carry (tar: gpu_bench at HEAD and v1), build/wheel-cp312
set -u
cd "$(dirname "$0")/../../.."
here=bench/results/2026-12-05-h200-session28
O=$OUT/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit,temperature.gpu --format=csv > $O/gpu.txt
OUT=$O source scripts/gpu-python-env.sh >/dev/null
echo "== pytest test_jax.py: command buffers, shard_map, empty inputs"; t0=$SECONDS
timeout 100 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_jax.py \
  -k "command_buffers or shard_map or empty_result" -W ignore::DeprecationWarning \
  > $O/pytest-jax.log 2>&1; echo "pytest rc=$? ($((SECONDS - t0)) s)"
grep -E "passed|failed|^FAILED|^ERROR" $O/pytest-jax.log | tail -4
echo "== B 1x128: HEAD vs v1 (192x128 takes turns), tiles forced"; t0=$SECONDS
mkdir -p /tmp/tiles
for round in 1 2; do
  for which in head v1; do
    bin=build/gpu_bench; [[ $which == v1 ]] && bin=build/v1/gpu_bench
    timeout 100 $bin $here/wgrad_shapes.txt --configs "1x128 blocks own" --own-tiles 256x128,192x128 \
      --csv /tmp/tiles/$which-$round.csv > /tmp/tiles/$which-$round.log 2>&1
    echo "$which $round rc=$?"
  done
done
echo "($((SECONDS - t0)) s)"; tar czf $O/tiles.tgz -C /tmp tiles
echo "== JAX MLP block: GPU idle per step"; t0=$SECONDS
timeout 160 python3 bench/python/jax_profile.py --steps 5 \
  --variants "fp8dot-blocks-kernel,fp8dot-seed-kernel" --out /tmp/prof > $O/jax-idle.log 2>&1
echo "profile rc=$? ($((SECONDS - t0)) s)"
grep -E "^== |GPU span|idle|us/step" $O/jax-idle.log | cut -c1-160 | head -30
echo "== ncu: B 1x128 256x128 and cuBLASLt's 1x128 GEMM"; t0=$SECONDS
NCU_SOURCE=1 NCU_SHAPES="4096 16384 8192" NCU_CONFIG="1x128 blocks own" \
  NCU_CUBLASLT_CONFIG="1x128 blocks" OUT=/tmp/ncu timeout 280 scripts/gpu-own-gemm-ncu.sh \
  > $O/ncu.log 2>&1; echo "ncu rc=$? ($((SECONDS - t0)) s)"
rm -f /tmp/ncu/*.ncu-rep; tar czf $O/ncu.tgz -C /tmp ncu
grep -E "^== |gmma_cycles|gpu__time|Stall|stall" $O/ncu.log | head -40
