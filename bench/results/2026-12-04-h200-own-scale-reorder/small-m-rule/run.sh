#!/usr/bin/env bash
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
for r in 1 2; do for v in cur all; do
timeout 100 build/ab/$v/gpu_bench build/ab/dgsmall.txt --configs "1x128 x 128x128 row-major" --csv $O/$v-$r.csv > $O/$v-$r.log 2>&1; echo "$v $r rc=$?"
done; done
python3 - <<'PY' | tee $O/summary.md
import csv, statistics, glob
rows = {}
for f in sorted(glob.glob('/tmp/o/*-[12].csv')):
    v = f.split('/')[-1].rsplit('-', 1)[0]
    for r in csv.DictReader(open(f)):
        try: a = float(r['fp8dot_ms']); d = float(r['direct_ms']); g = float(r['graph_ms']); dg = float(r['direct_graph_ms'])
        except: continue
        rows.setdefault((int(r['m']),int(r['n']),int(r['k'])), {}).setdefault(v, []).append((d/a, dg/g))
print('| M,N,K | producer staging: loop / graph vs cuBLASLt | reordered: loop / graph |')
for k in sorted(rows):
    d = rows[k]; f = lambda v, i: statistics.median(x[i] for x in d[v])
    print(f"| {k[0]},{k[1]},{k[2]} | {f('cur',0):.3f} / {f('cur',1):.3f} | {f('all',0):.3f} / {f('all',1):.3f} |")
PY
tar czf $OUT/r26i.tgz -C /tmp o
