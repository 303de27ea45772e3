#!/usr/bin/env bash
# bench/pending/2026-12-06-large-tiles-sustained (192x128 against 256x128 and 256x128c2 on the
# large GEMMs, interleaved and sustained) on the committed gpu_bench. Carry ["build/carry"];
# command "bash bench/results/2026-12-06-session44/call2/run.sh".
set -u
tar xJf build/carry/carry.tar.xz
bash bench/pending/2026-12-06-large-tiles-sustained/run.sh
