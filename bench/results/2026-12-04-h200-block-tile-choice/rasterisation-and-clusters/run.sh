#!/usr/bin/env bash
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
for r in 1 2; do
  for v in cur g16; do
    timeout 200 build/ab/$v/gpu_bench build/ab/s26d.txt --configs "1x128 x 128x128 own,fp8 promoted own vs fast" --csv $O/$v-$r.csv > $O/$v-$r.log 2>&1; echo "$v $r rc=$?"
  done
done
timeout 250 build/ab/cur/gpu_bench build/ab/s26d.txt --configs "1x128 x 128x128 own" --own-tiles 256x128,256x128c2,192x128 --csv $O/tiles.csv > $O/tiles.log 2>&1; echo "tiles rc=$?"
python3 - <<'PY' | tee $O/summary.md
import csv, statistics, glob
def load(pat):
    rows = {}
    for f in sorted(glob.glob(pat)):
        for r in csv.DictReader(open(f)):
            try: a = float(r['fp8dot_ms']); d = float(r['direct_ms'])
            except: continue
            if not (a > 0 and d > 0): continue
            rows.setdefault((int(r['m']),int(r['n']),int(r['k']), r['config']), []).append((a, d))
    return rows
cur, g16 = load('/tmp/o/cur-*.csv'), load('/tmp/o/g16-*.csv')
print('| M,N,K | config | cur own/cuBLASLt | g16 own/cuBLASLt | g16/cur speed |')
for k in sorted(cur):
    if k not in g16: continue
    c = statistics.median(x[1]/x[0] for x in cur[k]); g = statistics.median(x[1]/x[0] for x in g16[k])
    ca = statistics.median(x[0] for x in cur[k]); ga = statistics.median(x[0] for x in g16[k])
    print(f"| {k[0]},{k[1]},{k[2]} | {k[3]} | {c:.3f} | {g:.3f} | {ca/ga:.3f} |")
t = load('/tmp/o/tiles.csv')
print('\n| M,N,K | tile | TF | own/cuBLASLt |')
for k in sorted(t):
    a = statistics.median(x[0] for x in t[k]); d = statistics.median(x[1] for x in t[k])
    print(f"| {k[0]},{k[1]},{k[2]} | {k[3].split()[-1]} | {2*k[0]*k[1]*k[2]/a/1e9:.0f} | {d/a:.3f} |")
PY
tar czf $OUT/r26d.tgz -C /tmp o
