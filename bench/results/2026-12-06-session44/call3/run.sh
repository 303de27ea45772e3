#!/usr/bin/env bash
# bench/pending/2026-12-05-small-m-promoted-sweep's two promoted rounds (the device time left,
# 218 s, had no room for the block-scaled tiles): the DRAM-aware tile choice on this GPU.
# Carry ["build/carry"]; command "bash bench/results/2026-12-06-session44/call3/run.sh".
set -u
tar xJf build/carry/carry.tar.xz
bash bench/pending/2026-12-05-small-m-promoted-sweep/run.sh
cd $OUT && tar czf sweep-logs.tgz o && rm -rf o
