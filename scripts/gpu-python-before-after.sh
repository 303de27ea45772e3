#!/usr/bin/env bash
# On the GPU machine: one Python command run with two fp8dot packages (before and after a
# change) in alternating processes, so that clock and thermal drift hit both alike. Logs go to
# $OUT/<name>-before-<round>.log and $OUT/<name>-after-<round>.log.
#
#   BEFORE_WHEEL=build/wheel-before [ROUNDS=2] scripts/gpu-python-before-after.sh NAME COMMAND...
#   carry: build/wheel-cp312 (after), $BEFORE_WHEEL (the same kind of folder, built by
#          scripts/build-gpu-carry.sh from the base commit), .whl (peers, if COMMAND needs them)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-python-env.sh >/dev/null  # the after package, into /tmp/site
name=$1
shift
if [[ ! -d /tmp/site-before ]]; then
  shopt -s nullglob
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/site-before .whl/*.whl "${BEFORE_WHEEL:?set BEFORE_WHEEL to the wheel folder of the before build}"/*.whl ||
    exit 1
  shopt -u nullglob
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for which in before after; do
    site=/tmp/site
    [[ $which == before ]] && site=/tmp/site-before
    PYTHONPATH=$site timeout 300 "$@" >"$OUT/$name-$which-$round.log" 2>&1
    echo "$name $which $round: exit $?"
  done
done
