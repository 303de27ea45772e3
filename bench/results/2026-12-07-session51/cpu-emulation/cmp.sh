#!/usr/bin/env bash
# Usage: cmp.sh BEFORE_FP8DOT AFTER_FP8DOT (the CLI binaries); run in an empty folder.
# Runs the same CLI dots on two fp8dot binaries, compares the output files byte for byte.
set -u
before=$1 after=$2
n=0 same=0 refused=0 diff=0
run() {
  local id=$n; n=$((n + 1))
  "$before" dot --backend cpu --no-reference --output b-$id.npy "$@" > /dev/null 2>&1; rb=$?
  "$after" dot --backend cpu --no-reference --output a-$id.npy "$@" > /dev/null 2>&1; ra=$?
  if [[ $rb != 0 || $ra != 0 ]]; then
    [[ $rb == $ra ]] && refused=$((refused + 1)) || { diff=$((diff + 1)); echo "rc differs: $* ($rb $ra)"; }
  elif cmp -s b-$id.npy a-$id.npy; then same=$((same + 1)); else diff=$((diff + 1)); echo "DIFF: $*"; fi
  rm -f b-$id.npy a-$id.npy
}
for lhs in f8e4m3fn f8e5m2; do
 for dist in symmetric positive heavy-tailed mixed; do
  for prec in default highest; do
   for shape in "--m 37 --n 29 --k 300" "--m 64 --n 48 --k 1000" "--m 3 --n 5 --k 4096" "--batch 2 --m 17 --n 9 --k 257"; do
    base="--lhs-type $lhs --distribution $dist --precision $prec $shape --seed 7"
    run $base
    run $base --lhs-scale-mode outer --rhs-scale-mode outer
    run $base --lhs-scale-mode 1x128 --rhs-scale-mode 128x128
    run $base --lhs-scale-mode 1x128 --rhs-scale-mode 1x128 --fused-promotion
    run $base --accumulator-bits 1 --accumulator-group 1
    run $base --accumulator-bits 50 --accumulator-group 128
    run $base --accumulator-bits 22 --accumulator-rounding nearest
    run $base --accumulator-alignment product
    run $base --split-k 3
    run $base --promotion-interval 256 --accumulator-group 16
   done
  done
 done
done
echo "runs $n: identical $same, refused by both $refused, different $diff"
