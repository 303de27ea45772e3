# Sourced by the pending own-GEMM experiments' run.sh, after scripts/gpu-call-setup.sh: the GPU
# checks a kernel change needs, logs in $O.
#   own_gemm_tests SECONDS [FOLDER]
#                               the own-kernel GPU tests (bit-identity with the CPU emulation)
#                               of build/tests/cuda/cuda_test, or of FOLDER/cuda_test (another
#                               variant's build; log own-tests-<FOLDER's name>.log)
#   own_gemm_sanitizers FILTER  compute-sanitizer racecheck and synccheck on the tests FILTER
#                               selects
own_gemm_tests() {
  local binary=build/tests/cuda/cuda_test log=$O/own-tests.log t0=$SECONDS
  if [[ $# -gt 1 ]]; then binary=$2/cuda_test log=$O/own-tests-$(basename "$2").log; fi
  echo "== $binary CudaOwnGemmTest.*"
  timeout "$1" "$binary" --gtest_filter='CudaOwnGemmTest.*' > "$log" 2>&1
  echo "own tests rc=$? ($((SECONDS - t0)) s)"
  grep -E "^\[  (PASSED|FAILED)  \]| ran\. \(" "$log" | tail -8
}

own_gemm_sanitizers() {
  local tool t0
  for tool in racecheck synccheck; do
    t0=$SECONDS
    timeout 120 compute-sanitizer --tool $tool --print-limit 20 build/tests/cuda/cuda_test \
      --gtest_filter="$1" > "$O/$tool.log" 2>&1
    echo "$tool rc=$? ($((SECONDS - t0)) s):" \
      "$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/$tool.log" | tail -1)"
  done
}
