#!/usr/bin/env bash
# Session 49, call 2 (one device call, ~5 min): why DeepGEMM pulls a 64x64 tile's stages faster
# (call 1's Nsight Compute at 128x4096x7168: same tile, stages and bytes, 363 against 476 SM
# clocks a K-block; the own math warps wait on the full barriers ~29% of samples). Three builds
# of the own kernel, interleaved on DeepGEMM's 18 shapes (the plan's tiles), two rounds:
#   v0 = bfd8700;
#   v1 = a lone math warpgroup (64-row tiles, B 128x128) frees block k's stage as soon as its
#        wgmma completed, before it waits for block k + 1's data (v0 holds it through that wait);
#   v2 = with scale maps and B 128x128, the copy thread also issues the stage's scale copies (one
#        producer thread, as DeepGEMM's), not a lane of a second warp;
#   v3 = v1 and v2 together.
# then the own GEMM's GPU tests of v3 (it holds both changes) (against the CPU emulation, bit for bit).
# Carry ["build/carry"] (build/carry/carry.tar.xz: build/v0, build/v1, build/v2, build/v3); command
#   "tar xJf build/carry/carry.tar.xz && bash bench/results/2026-12-07-session49/call2/run.sh"
set -u
cd "$(dirname "$0")/../../../.."
source scripts/gpu-call-setup.sh
for round in 1 2; do
  for v in v0 v1 v2 v3; do
    t0=$SECONDS
    timeout 100 build/$v/gpu_bench bench/deepgemm_shapes.txt --configs "1x128 x 128x128 own" \
      --csv $O/$v-$round.csv > $O/$v-$round.log 2>&1
    echo "$v round $round rc=$? ($((SECONDS - t0)) s)"
  done
done
for v in v3; do  # (cuda_test needs libfp8dot_c.so: not carried, rc 127)
  t0=$SECONDS
  timeout 150 build/$v/cuda_test --gtest_filter='CudaOwnGemmTest.*' > $O/tests-$v.log 2>&1
  echo "tests $v rc=$? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED) \]" $O/tests-$v.log | tail -3
done
python3 - "$O" <<'PY'
import csv, sys, statistics
out = sys.argv[1]
rows = {}
for v in ("v0", "v1", "v2", "v3"):
    for r in (1, 2):
        for row in csv.DictReader(open(f"{out}/{v}-{r}.csv")):
            key = (int(row["m"]), int(row["n"]), int(row["k"]))
            ms = float(row["graph_ms"]) if row["graph_ms"] != "nan" else float(row["fp8dot_ms"])
            rows.setdefault(key, {}).setdefault(v, []).append((ms, float(row["fp8dot_ms"])))
print("M,N,K | v0 us (graph or loop) | v1/v0 | v2/v0 | v3/v0 (speed-ups, both rounds)")
for key in sorted(rows):
    d = rows[key]
    base = [x[0] for x in d["v0"]]
    s = " | ".join(
        ", ".join(f"{b / x[0]:.3f}" for b, x in zip(base, d[v])) for v in ("v1", "v2", "v3"))
    print(f"{key[0]},{key[1]},{key[2]} | {', '.join(f'{b * 1e3:.2f}' for b in base)} | {s}")
PY
cp $O/gpu.txt $OUT/
tar czf $OUT/call2.tgz -C $O .
