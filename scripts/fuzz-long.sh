#!/usr/bin/env bash
# The long offline fuzz run, for a machine with many cores (the GPU machine's 16 serve): every
# target at once, each with libFuzzer's -fork workers, from the committed seed corpora.
#
#   FUZZ_BIN=dir-with-the-4-fuzzers [FUZZ_WORK=/tmp/fuzz-long] scripts/fuzz-long.sh [seconds]
#
# Build the fuzzers here first (scripts/fuzz.sh 0 builds build-fuzz/tests/fuzz/*). Prints per
# target the executions and any finding (inputs saved under $FUZZ_WORK/findings/<target>/);
# exits 1 on a finding.
set -u
cd "$(dirname "$0")/.."
seconds=${1:-480}
bin=${FUZZ_BIN:-build-fuzz/tests/fuzz}
work=${FUZZ_WORK:-/tmp/fuzz-long}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cores=$(nproc)

# target, share of the cores (the HLO targets are the slow ones), -max_len
targets=("hlo_parser_fuzzer 3 16384" "hlo_evaluate_fuzzer 3 8192" "npy_fuzzer 1 4096"
         "gemm_backend_config_fuzzer 1 2048")
run() {
  local target=$1 workers=$2 max_len=$3 dict=()
  [[ $target == hlo_* ]] && dict=(-dict=tests/fuzz/hlo.dict)
  mkdir -p "$work/corpus/$target" "$work/findings/$target"
  cp tests/fuzz/corpus/"$target"/* "$work/corpus/$target/"
  "$bin/$target" -fork="$workers" -ignore_crashes=0 "${dict[@]}" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" -artifact_prefix="$work/findings/$target/" \
    "$work/corpus/$target" > "$work/$target.log" 2>&1
}
for entry in "${targets[@]}"; do
  read -r target share max_len <<< "$entry"
  run "$target" $(( cores * share / 8 > 0 ? cores * share / 8 : 1 )) "$max_len" &
done
wait
found=0
for entry in "${targets[@]}"; do
  read -r target _ _ <<< "$entry"
  # Fork mode's status lines: "#<executions>: cov: ... oom/timeout/crash: 0/0/0 time: ..."
  last=$(grep -E '^#[0-9]+' "$work/$target.log" | tail -1)
  executions=$(echo "$last" | grep -o '^#[0-9]*' | tr -d '#')
  crashes=$(ls "$work/findings/$target" | wc -l)
  echo "$target: ${executions:-?} executions, $crashes finding(s) ($(echo "$last" | grep -o 'oom/timeout/crash: [0-9/]*'))"
  ((crashes == 0)) || { found=1; ls "$work/findings/$target"; grep -m3 -E "ERROR|runtime error|PROPERTY" "$work/$target.log"; }
done
exit "$found"
