#!/usr/bin/env bash
set -u
O=/tmp/o; rm -rf $O; mkdir -p $O
for r in 1 2; do
  timeout 200 build/ab/cur/gpu_bench build/ab/ksweep.txt --configs "1x128 x 128x128 own,fp8 promoted own vs fast" --own-tiles 256x128,192x128 --csv $O/k-$r.csv > $O/k-$r.log 2>&1; echo "k $r rc=$?"
done
echo "4096 7168 2048" > $O/s.txt
timeout 200 ncu --clock-control none --kernel-name regex:block_scaled --launch-skip 3 --launch-count 1 \
  --section WarpStateStats --section SpeedOfLight --section SourceCounters \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum \
  -f -o /tmp/ncu256 build/ab/cur/gpu_bench $O/s.txt --configs "1x128 x 128x128 own" --own-tiles 256x128 > $O/ncu.log 2>&1; echo "ncu rc=$?"
ncu --import /tmp/ncu256.ncu-rep --page details >> $O/ncu.log 2>&1
ncu --import /tmp/ncu256.ncu-rep --page source --csv --print-source sass > $O/sass256.csv 2>&1
python3 bench/sass_stalls.py $O/sass256.csv > $O/stalls256.txt 2>&1
grep -E "gmma|Duration|SM Frequency|elapsed.avg.per_second|Compute \(SM\)" $O/ncu.log | head
head -30 $O/stalls256.txt
python3 - <<'PY' | tee $O/summary.md
import csv, statistics, glob
rows = {}
for f in sorted(glob.glob('/tmp/o/k-*.csv')):
    for r in csv.DictReader(open(f)):
        try: a = float(r['fp8dot_ms']); d = float(r['direct_ms'])
        except: continue
        if not (a > 0 and d > 0): continue
        rows.setdefault((r['config'], int(r['k'])), []).append((a, d))
print('| config | K | own ms | cuBLASLt ms | own TF | own/cuBLASLt |')
for key in sorted(rows):
    a = statistics.median(x[0] for x in rows[key]); d = statistics.median(x[1] for x in rows[key])
    print(f"| {key[0]} | {key[1]} | {a:.4f} | {d:.4f} | {2*4096*7168*key[1]/a/1e9:.0f} | {d/a:.3f} |")
PY
tar czf $OUT/r26c.tgz -C /tmp o
