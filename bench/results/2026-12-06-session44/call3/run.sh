#!/usr/bin/env bash
# bench/pending/2026-12-05-small-m-promoted-sweep with the block-scaled tiles (session 41's
# list): the DRAM-aware tile choice on this GPU. Carry ["build/carry"]; command
# "bash bench/results/2026-12-06-session44/call3/run.sh".
set -u
tar xJf build/carry/carry.tar.xz
BLOCK_TILES=64x32,64x32s2,64x64,64x64s2,64x64s4,64x128,64x128s2,128x64,128x64s2,128x128,128x128s2 \
  bash bench/pending/2026-12-05-small-m-promoted-sweep/run.sh
cd $OUT && tar czf sweep-logs.tgz o && rm -rf o
