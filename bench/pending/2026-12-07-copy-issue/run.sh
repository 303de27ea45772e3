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
ksweep() {
  run ksweep-before-$1 build/before/gpu_bench $here/call3/k-sweep.txt \
    "1x128 x 128x128 own,fp8 promoted own vs fast"
  run ksweep-after-$1 build/gpu_bench $here/call3/k-sweep.txt \
    "1x128 x 128x128 own,fp8 promoted own vs fast"
  run ksweep-hint-$1 build/hint/gpu_bench $here/call3/k-sweep.txt \
    "1x128 x 128x128 own,fp8 promoted own vs fast"
  run ksweep-whole-hint-$1 build/whole-hint/gpu_bench $here/call3/k-sweep.txt \
    "1x128 x 128x128 own,fp8 promoted own vs fast"
}
pack() { tar czf $OUT/call5.tgz -C $O .; }
ksweep 1
pack
own_gemm_tests 120
for variant in hint whole-hint; do
  t0=$SECONDS
  timeout 120 build/$variant/cuda_test --gtest_filter='CudaOwnGemmTest.*' \
    > $O/own-tests-$variant.log 2>&1
  echo "$variant tests rc=$? ($((SECONDS - t0)) s)"
  grep -E "^\[  (PASSED|FAILED) \]" $O/own-tests-$variant.log
done
pack
own_gemm_sanitizers 'CudaOwnGemmTest.BlockScalesOfSeveralTilesPerCta*:CudaOwnGemmTest.OuterScalesWithAnyPromotionIntervalAreBitIdenticalToTheEmulation'
pack
run deepgemm-before build/before/gpu_bench bench/deepgemm_shapes.txt "1x128 x 128x128 own"
run deepgemm-after build/gpu_bench bench/deepgemm_shapes.txt "1x128 x 128x128 own"
run deepgemm-hint build/hint/gpu_bench bench/deepgemm_shapes.txt "1x128 x 128x128 own"
run deepgemm-whole-hint build/whole-hint/gpu_bench bench/deepgemm_shapes.txt "1x128 x 128x128 own"
pack
ksweep 2
pack
python3 - $O <<'PY'
# (after / cuBLASLt) / (before / cuBLASLt) per row, graph time where there is one (M <= 128).
import csv, glob, sys
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
for label, before_label, after_label in (
        ("A ksweep-1", "ksweep-before-1", "ksweep-after-1"),
        ("B ksweep-1", "ksweep-before-1", "ksweep-hint-1"),
        ("C ksweep-1", "ksweep-before-1", "ksweep-whole-hint-1"),
        ("A ksweep-2", "ksweep-before-2", "ksweep-after-2"),
        ("B ksweep-2", "ksweep-before-2", "ksweep-hint-2"),
        ("C ksweep-2", "ksweep-before-2", "ksweep-whole-hint-2"),
        ("A deepgemm", "deepgemm-before", "deepgemm-after"),
        ("B deepgemm", "deepgemm-before", "deepgemm-hint"),
        ("C deepgemm", "deepgemm-before", "deepgemm-whole-hint")):
    try:
        b, a = rows(f"{sys.argv[1]}/{before_label}.csv"), rows(f"{sys.argv[1]}/{after_label}.csv")
    except FileNotFoundError:
        continue
    print(f"== {label}: M,N,K | config | own/cuBLASLt before -> after | after/before | tile")
    for key in b:
        if key in a:
            print(f"{','.join(key[:3])} | {key[3]} | {b[key][0]:.3f} -> {a[key][0]:.3f} | "
                  f"{a[key][0] / b[key][0]:.3f} | {a[key][1]}")
PY
tar czf $OUT/call5.tgz -C $O .
cp $O/gpu.txt $OUT/
