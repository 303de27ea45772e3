#!/usr/bin/env bash
# The plan tests, then an A/B/C of a CUDA plan's stream handoff on the host cost: loop-timed
# fp8dot against the direct cuBLASLt call at small shapes, the binaries alternating:
# event (recorded every run), skip (only for plans that write memory of their own), nohandoff.
set -u
source scripts/gpu-call-setup.sh
tar xJf build/carry/tests.tar.xz
timeout 120 build/tests/cuda/cuda_test --gtest_filter='CudaPlanTest.*:CudaOwnGemmTest.Autotuning*:CApiTest.*' > $O/tests.log 2>&1
echo "tests rc $?"; grep -E "^\[ +(FAILED|PASSED) |Failure" $O/tests.log | head
for b in event nohandoff skip; do xz -dc build/carry/gpu_bench-$b.xz > build/gpu_bench-$b; chmod +x build/gpu_bench-$b; done
printf '64 256 256\n128 1024 1024\n128 7168 2048\n64 4096 7168\n' > $O/shapes.txt
for round in 1 2 3; do
  for b in event skip nohandoff; do
    timeout 60 build/gpu_bench-$b $O/shapes.txt --configs "fp8 fast,fp8 promoted" --csv $O/$b-$round.csv > $O/$b-$round.log 2>&1
    echo "$b round $round rc=$?"
  done
done
python3 - $O <<'PY' | tee $O/summary.md
import csv, glob, statistics, sys
res = {}
for path in glob.glob(f"{sys.argv[1]}/*-[123].csv"):
    b = path.split("/")[-1].split("-")[0]
    for row in csv.DictReader(open(path)):
        try:
            m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
            own, direct = float(row["fp8dot_ms"]), float(row["direct_ms"])
        except (KeyError, ValueError):
            continue
        res.setdefault((m, n, k, row["config"]), {}).setdefault(b, []).append((own * 1e3, direct * 1e3))
print("| M,N,K | config | event every run: fp8dot / direct us | skipped without plan memory | no handoff |")
print("|---|---|---|---|---|")
for (m, n, k, config), d in sorted(res.items()):
    cells = []
    for b in ("event", "skip", "nohandoff"):
        v = d.get(b, [])
        cells.append(f"{statistics.median(o for o, _ in v):.2f} / {statistics.median(x for _, x in v):.2f}" if v else "-")
    print(f"| {m},{n},{k} | {config} | " + " | ".join(cells) + " |")
PY
cd $O && tar czf logs.tgz *.csv *.log && rm -f *.csv *-[123].log shapes.txt
