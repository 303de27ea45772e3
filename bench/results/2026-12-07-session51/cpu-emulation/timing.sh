#!/usr/bin/env bash
# Usage: timing.sh BEFORE_FP8DOT AFTER_FP8DOT (one core: taskset -c 1).
# Median of 7 alternating runs of each side's `time:` for each config.
before=$1 after=$2
configs=("--precision default --m 512 --n 1024 --k 512"
         "--precision highest --m 512 --n 1024 --k 512"
         "--precision highest --m 512 --n 1024 --k 512 --lhs-scale-mode 1x128 --rhs-scale-mode 128x128"
         "--precision highest --m 512 --n 1024 --k 512 --lhs-type f8e5m2 --accumulator-alignment product"
         "--precision highest --m 512 --n 256 --k 64"
         "--precision default --m 512 --n 64 --k 256")
for cfg in "${configs[@]}"; do
  b=(); a=()
  for r in 1 2 3 4 5 6 7; do
    b+=($(taskset -c 1 "$before" dot --backend cpu --no-reference $cfg | awk '/^time:/ {print $2}'))
    a+=($(taskset -c 1 "$after" dot --backend cpu --no-reference $cfg | awk '/^time:/ {print $2}'))
  done
  mb=$(printf "%s\n" "${b[@]}" | sort -n | sed -n 4p); ma=$(printf "%s\n" "${a[@]}" | sort -n | sed -n 4p)
  echo "| $cfg | $mb | $ma | $(python3 -c "print(f'{$mb / $ma:.2f}x')") |"
done
