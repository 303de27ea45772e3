#!/usr/bin/env bash
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
timeout 100 build/ab/cur/gpu_bench build/ab/dg.txt --configs "1x128 x 128x128 row-major,1x128 x 128x128 own" --csv $O/dg-rowmajor.csv > $O/dg-rowmajor.log 2>&1; echo "dg rc=$?"
grep -E "^\| [0-9]" $O/dg-rowmajor.log | cut -d'|' -f1-9 | sed 's/  */ /g'
LD_LIBRARY_PATH=$PWD/build timeout 330 compute-sanitizer --tool memcheck --print-limit 20 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemmTest.ColumnScalesAreBitIdenticalToTheEmulation:CudaOwnGemmTest.EveryTileIsBitIdenticalToTheEmulation' > $O/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED|OK \]" $O/memcheck.log | tail -6
tar czf $OUT/r26h.tgz -C /tmp o
