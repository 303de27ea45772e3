#!/usr/bin/env python3
"""How far the memory floor lets any kernel beat cuBLASLt, per small-M row of gpu_bench CSVs.

gpu_bench times, for each M <= 128 shape, a kernel that only reads the FP8 operands once from
HBM and writes a bf16 D (bench/memory_floor.h; its "memory floor" rows), in CUDA graphs like
the GEMMs' graph column. No GEMM of that shape can take less time, so cuBLASLt's graph time
over the floor's is the largest speed-up over cuBLASLt that any kernel could show in that run:
where it is below a target ratio (issue #15's 1.3x), the target is out of physical reach on
that GPU, whatever the kernel does.

    bench/floor_bound.py [--target 1.3] [--config "1x128 x 128x128 own"] CSV...

Prints one row per shape and config: own / cuBLASLt, the bound (cuBLASLt / floor), the own
kernel's share of the floor's speed, and whether the target is within the bound. Several CSVs
(rounds of one GPU) give medians.
"""
import argparse
import csv
import statistics
import sys


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value == value and value > 0 else None


def read_rows(paths, config_filter):
    floors, runs = {}, {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                shape = (int(row["m"]), int(row["n"]), int(row["k"]))
                graph = number(row.get("graph_ms"))
                if row["config"] == "memory floor":
                    if graph:
                        floors.setdefault(shape, []).append(graph)
                    continue
                direct = number(row.get("direct_graph_ms"))
                if graph and direct and (not config_filter or row["config"] == config_filter):
                    runs.setdefault((shape, row["config"]), []).append((graph, direct))
    return floors, runs


def bound_table(paths, target=1.3, config=""):
    """The markdown table and its summary line for gpu_bench CSVs `paths`."""
    floors, runs = read_rows(paths, config)
    if not runs:
        raise ValueError("no rows with graph times (M <= 128) in " + " ".join(map(str, paths)))
    lines = ["| M,N,K | config | own / cuBLASLt | bound: cuBLASLt / floor | own / floor speed | "
             f"{target}x within the bound |", "|---|---|---:|---:|---:|---|"]
    out_of_reach = 0
    for (shape, name), times in sorted(runs.items()):
        own = statistics.median(t for t, _ in times)
        direct = statistics.median(d for _, d in times)
        label = f"| {','.join(map(str, shape))} | {name} | {direct / own:.3f} |"
        if shape not in floors:
            lines.append(f"{label} no floor row | | |")
            continue
        floor = statistics.median(floors[shape])
        bound = direct / floor
        out_of_reach += bound < target
        lines.append(f"{label} {bound:.3f} | {floor / own:.0%} | "
                     f"{'yes' if bound >= target else '**no**'} |")
    lines.append(f"\n{out_of_reach} of {len(runs)} rows cannot reach {target}x cuBLASLt: reading "
                 "their operands once takes longer than cuBLASLt's time over the target.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--target", type=float, default=1.3,
                        help="the speed-up over cuBLASLt to check (default 1.3)")
    parser.add_argument("--config", default="", help="only this gpu_bench config")
    args = parser.parse_args()
    try:
        print(bound_table(args.csv, args.target, args.config))
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"floor_bound.py: {error}")


if __name__ == "__main__":
    main()
