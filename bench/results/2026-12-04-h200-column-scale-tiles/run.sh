#!/usr/bin/env bash
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/build
timeout 200 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemm*Column*' > $O/column-tests.log 2>&1; echo "column tests rc=$?"; grep -E "OK|FAILED|PASSED" $O/column-tests.log | tail -4
for r in 1 2; do
  timeout 200 build/ab/col/gpu_bench build/ab/wgrad.txt --configs "1x128 blocks own" --own-tiles 128x128,256x128,192x128,256x64 --csv $O/tiles-$r.csv > $O/tiles-$r.log 2>&1; echo "tiles $r rc=$?"
done
python3 - <<'PY' | tee $O/summary.md
import csv, statistics, glob
rows = {}
for f in sorted(glob.glob('/tmp/o/tiles-*.csv')):
    for r in csv.DictReader(open(f)):
        try: a = float(r['fp8dot_ms']); d = float(r['direct_ms'])
        except: continue
        if not (a > 0 and d > 0): continue
        tf = 2 * int(r['m']) * int(r['n']) * int(r['k']) / a / 1e9
        rows.setdefault((int(r['m']),int(r['n']),int(r['k'])), {}).setdefault(r['config'].split()[-1], []).append((tf, d / a, 2 * int(r['m']) * int(r['n']) * int(r['k']) / d / 1e9))
tiles = ['128x128','256x128','192x128','256x64']
print('| M,N,K | cuBLASLt TF | ' + ' | '.join(f'{t} TF (own/cuBLASLt)' for t in tiles) + ' |')
print('|---|---|' + '---|' * len(tiles))
for k in sorted(rows):
    d = rows[k]
    med = lambda t, i: statistics.median(x[i] for x in d[t]) if t in d else float('nan')
    cub = statistics.median(x[2] for t in d for x in d[t])
    print(f"| {k[0]},{k[1]},{k[2]} | {cub:.0f} | " + ' | '.join(f"{med(t,0):.0f} ({med(t,1):.3f})" for t in tiles) + ' |')
PY
tar czf $OUT/r26b.tgz -C /tmp o
