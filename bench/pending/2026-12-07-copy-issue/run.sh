#!/usr/bin/env bash
# One device call (~8 min; README.md says why): HEAD (build/before) against two variants,
# A (build/): two-copy-threads.diff, B's copies from lane 0 of a fourth producer warp beside warp
# 0's lane issuing A's, on the 64-row tiles; B (build/hint/): cache-hint.diff, the copies with
# the L2 policy DeepGEMM's carry; C (build/whole-hint/): B with session 51's
# whole-producer-warps.diff, whose copy path is then DeepGEMM's in the SASS (back-to-back
# UTMALDG from uniform registers with the policy operand). In order of importance: the K sweep of session 52's call 3
# (A 1x128 x B 128x128, and tensor scales promoted against cuBLASLt's fast GEMM; the plan's
# tiles), the GPU tests of both, racecheck and synccheck on A, DeepGEMM's 18 shapes (block
# scales), a second K-sweep round; the logs packed after each step.
# Build (~8 min): bench/pending/2026-12-07-copy-issue/build.sh
# Carry ["build/carry"]; command
#   "tar xJf build/carry/carry.tar.xz && bash bench/pending/2026-12-07-copy-issue/run.sh"
set -u
cd "$(dirname "$0")/../../.."
source scripts/gpu-call-setup.sh
source bench/pending/own-gemm-checks.sh
here=bench/results/2026-12-07-session52  # call 3's K sweep
run() {  # LABEL BENCH SHAPES CONFIGS
  local t0=$SECONDS
  timeout 80 $2 $3 --configs "$4" --csv $O/$1.csv > $O/$1.log 2>&1
  echo "$1 rc=$? ($((SECONDS - t0)) s)"
}
# Each build, by name: HEAD, then the variants A, B and C.
declare -A bench=([before]=build/before [after]=build [hint]=build/hint [whole-hint]=build/whole-hint)
builds=(before after hint whole-hint)
shapes() {  # LABEL SHAPES CONFIGS: each build in turn
  local build
  for build in "${builds[@]}"; do run "$1-$build" "${bench[$build]}/gpu_bench" "$2" "$3"; done
}
ksweep() { shapes ksweep-$1 $here/call3/k-sweep.txt "1x128 x 128x128 own,fp8 promoted own vs fast"; }
pack() { tar czf $OUT/call5.tgz -C $O .; }
ksweep 1
pack
own_gemm_tests 120
own_gemm_tests 120 build/hint
own_gemm_tests 120 build/whole-hint
pack
own_gemm_sanitizers 'CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*:CudaOwnGemmTest.OuterScalesWithAnyPromotionIntervalAreBitIdenticalToTheEmulation'
pack
shapes deepgemm bench/deepgemm_shapes.txt "1x128 x 128x128 own"
pack
ksweep 2
pack
python3 - $O <<'PY'
# (variant / cuBLASLt) / (HEAD / cuBLASLt) per row, graph time where there is one (M <= 128).
import csv, sys
def rows(path):
    out = {}
    for r in csv.DictReader(open(path)):
        try:
            own, direct = float(r["graph_ms"]), float(r["direct_graph_ms"])
            if own != own:
                own, direct = float(r["fp8dot_ms"]), float(r["direct_ms"])
        except (KeyError, ValueError):
            continue
        if own == own and own > 0:
            out[(r["m"], r["n"], r["k"], r["config"])] = (direct / own, r["note"].strip())
    return out
for part in ("ksweep-1", "ksweep-2", "deepgemm"):
    for variant, build in (("A", "after"), ("B", "hint"), ("C", "whole-hint")):
        try:
            b = rows(f"{sys.argv[1]}/{part}-before.csv")
            a = rows(f"{sys.argv[1]}/{part}-{build}.csv")
        except FileNotFoundError:
            continue
        print(f"== {variant} {part}: M,N,K | config | own/cuBLASLt HEAD -> {variant} | ratio | tile")
        for key in b:
            if key in a:
                print(f"{','.join(key[:3])} | {key[3]} | {b[key][0]:.3f} -> {a[key][0]:.3f} | "
                      f"{a[key][0] / b[key][0]:.3f} | {a[key][1]}")
PY
pack
cp $O/gpu.txt $OUT/
