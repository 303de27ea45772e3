#!/usr/bin/env bash
set -u
O=/tmp/o; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/build
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $O/gpu.txt
timeout 150 build/tests/cuda/cuda_test --gtest_filter='CudaOwnGemm*' > $O/own-tests.log 2>&1; echo "own tests rc=$?"; tail -3 $O/own-tests.log
for r in 1 2; do
  timeout 120 build/ab/before/gpu_bench build/ab/s26.txt --configs "1x128 x 128x128 own" --own-tiles 256x128 --csv $O/before-$r.csv > $O/before-$r.log 2>&1; echo "before $r rc=$?"
  timeout 160 build/ab/after/gpu_bench build/ab/s26.txt --configs "1x128 x 128x128 own" --own-tiles 256x128,192x128 --csv $O/after-$r.csv > $O/after-$r.log 2>&1; echo "after $r rc=$?"
done
python3 - <<'PY' | tee $O/summary.md
import csv, statistics, glob
rows = {}
for f in sorted(glob.glob('/tmp/o/*-[12].csv')):
    v = f.split('/')[-1].rsplit('-', 1)[0]
    for r in csv.DictReader(open(f)):
        try: a = float(r['fp8dot_ms']); d = float(r['direct_ms'])
        except: continue
        if not (a > 0 and d > 0): continue
        tf = 2 * int(r['m']) * int(r['n']) * int(r['k']) / a / 1e9
        rows.setdefault((int(r['m']),int(r['n']),int(r['k'])), {}).setdefault(v + ' ' + r['config'].split()[-1], []).append((tf, d / a))
print('| M,N,K | before 256 TF | after 256 TF | after/before | after 192 TF | 192/256 after | own/cuBLASLt after best |')
print('|---|---|---|---|---|---|---|')
for k in sorted(rows):
    d = rows[k]
    med = lambda key, i: statistics.median(x[i] for x in d[key]) if key in d else float('nan')
    b = med('before 256x128', 0); a = med('after 256x128', 0); c = med('after 192x128', 0)
    best = max(med('after 256x128', 1), med('after 192x128', 1))
    print(f"| {k[0]},{k[1]},{k[2]} | {b:.0f} | {a:.0f} | {a/b:.3f} | {c:.0f} | {c/a:.3f} | {best:.3f} |")
PY
tar czf $OUT/r26a.tgz -C /tmp o
