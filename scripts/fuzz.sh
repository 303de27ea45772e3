#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz; clang, ASan+UBSan, CPU-only) into build-fuzz/ and runs
# each for the given seconds (default 60), one after the other, from its committed seed corpus
# (tests/fuzz/corpus/<target>/; what a run adds goes to build-fuzz/corpus/<target>/).
#
#   scripts/fuzz.sh [seconds-per-target]
#   FP8DOT_FUZZ_TARGETS="npy_fuzzer hlo_parser_fuzzer" scripts/fuzz.sh 600   # some targets only
#
# Prints per target the executions run and whether it found anything. A crash, sanitizer report,
# timeout (> 10 s on one input), out-of-memory (> 2048 MB) or leak saves the input under
# build-fuzz/findings/<target>/ and makes the script exit 1 (after running the other targets).
# Reproduce one: build-fuzz/tests/fuzz/<target> <file>. Known, minimised findings:
# tests/fuzz/findings/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build_dir=build-fuzz
targets=(${FP8DOT_FUZZ_TARGETS:-hlo_parser_fuzzer hlo_evaluate_fuzzer npy_fuzzer gemm_backend_config_fuzzer})

max_len() {
  case $1 in
    hlo_parser_fuzzer) echo 16384 ;;
    hlo_evaluate_fuzzer) echo 8192 ;;
    npy_fuzzer) echo 4096 ;;
    gemm_backend_config_fuzzer) echo 2048 ;;
  esac
}

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
echo "== fuzz: building the fuzz targets in $build_dir"
start=$SECONDS
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFP8DOT_FUZZ=ON \
  -DFP8DOT_CUDA=OFF -DFP8DOT_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" >/dev/null
ninja -C "$build_dir" fuzzers | grep -v '^\[' || true
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "fuzz.sh: build failed" >&2; exit 2; }
echo "== fuzz: built in $((SECONDS - start)) s; ${seconds} s per target"

# A fuzz run is only worth its count if the seeds get through: every seed module of the evaluate
# target must still parse (a stale object once made the parser refuse parameter(N), and the
# fuzzers ran on, finding nothing, at 5x the speed), and most must reach the interpreter.
seed_stages=$(FP8DOT_FUZZ_VERBOSE=1 "$build_dir/tests/fuzz/hlo_evaluate_fuzzer" -runs=0 \
  tests/fuzz/corpus/hlo_evaluate_fuzzer 2>&1 | grep '^hlo_evaluate_fuzzer: ' || true)
seeds=$(ls tests/fuzz/corpus/hlo_evaluate_fuzzer | wc -l)
evaluated=$(grep -c ': evaluated' <<<"$seed_stages" || true)
if ((evaluated * 2 < seeds)); then
  echo "fuzz.sh: only $evaluated of $seeds seed modules reach the interpreter; the build or the" \
    "parser is broken:" >&2
  sort <<<"$seed_stages" | uniq -c | head -5 >&2
  exit 2
fi
echo "== fuzz: $evaluated of $seeds seed modules reach the interpreter"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
found=0
summary=()
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  findings="$build_dir/findings/$target"
  log="$build_dir/logs/$target.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  dict=()
  [[ $target == hlo_* ]] && dict=(-dict=tests/fuzz/hlo.dict)
  echo "== fuzz: $target (${seconds} s, -max_len=$(max_len "$target"))"
  rc=0
  "$build_dir/tests/fuzz/$target" "$corpus" "tests/fuzz/corpus/$target" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
    -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [[ -n $runs ]] || runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
  if ((rc != 0)); then
    found=1
    artifact=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //' || true)
    cause=$(grep -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|FUZZ PROPERTY FAILED|out-of-memory|timeout" "$log" | cut -c1-200 || true)
    summary+=("$target: FINDING after ${runs:-?} executions: ${cause:-exit $rc}; input: ${artifact:-see $log}")
    echo "${summary[-1]}"
    grep -A12 -m1 -E "ERROR: |runtime error:|FUZZ PROPERTY FAILED" "$log" | head -25 || true
  else
    summary+=("$target: ${runs:-?} executions, no finding")
    echo "${summary[-1]}"
  fi
done
echo "== fuzz summary (${seconds} s per target; logs in $build_dir/logs/)"
printf '  %s\n' "${summary[@]}"
exit "$found"
