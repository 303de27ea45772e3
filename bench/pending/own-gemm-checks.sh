# Sourced by the pending own-GEMM experiments' run.sh, after scripts/gpu-call-setup.sh: the GPU
# checks a kernel change needs, logs in $O.
#   own_gemm_tests SECONDS      the own-kernel GPU tests (bit-identity with the CPU emulation)
#   own_gemm_sanitizers FILTER  compute-sanitizer racecheck and synccheck on the tests FILTER
#                               selects
own_gemm_tests() {
  echo "== cuda_test CudaOwnGemmTest.*"
  local t0=$SECONDS
  timeout "$1" build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.*' \
    > "$O/own-tests.log" 2>&1
  echo "own tests rc=$? ($((SECONDS - t0)) s)"
  grep -E "^\[  (PASSED|FAILED) \]|tests ran|^\[  FAILED" "$O/own-tests.log" | tail -8
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
