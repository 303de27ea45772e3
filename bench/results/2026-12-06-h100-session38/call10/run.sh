#!/usr/bin/env bash
# The cuBLASLt-path GPU tests after the stream-ID handoff and the exact workspace size.
set -u
source scripts/gpu-call-setup.sh
tar xJf build/carry/carry.tar.xz
t0=$SECONDS
timeout 200 build/tests/cuda/cuda_test --gtest_filter='CudaPlanTest.*:CudaDotPrecisionTest.*:CudaDotLayoutTest.*:CudaDotTypesTest.*:CApiTest.*:CudaDotEpilogueTest.*:CudaScaleLayoutTest.*:CudaOwnGemmTest.Autotuning*' > $O/tests.log 2>&1
echo "tests rc $? ($((SECONDS - t0)) s)"; grep -E "^\[ +(FAILED|PASSED) |Failure|tests ran" $O/tests.log | head -20
