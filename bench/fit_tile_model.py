"""Fits the own GEMM's tile cost model (CostedTiles in src/cuda/kernels/block_scaled_gemm_tiles.cc)
to gpu_bench tile sweeps: for each shape, the time of the tile the model picks against the
fastest tile measured. Reads gpu_bench CSVs (rows of "... own <tile>" configs, or the plan's own
row, whose note names its tile), CUDA-graph times. Prints the kernel's constants' losses, the best
fit over a grid (with an HBM term the kernel's model does not have yet: unique operand bytes at
`hbm` bytes per SM clock, 0 = off), and per shape what each picks.

  python3 bench/fit_tile_model.py CSV... [--scaling blocks|outer]

Fit on the GPU the defaults are meant for (the H200): the fastest tile depends on its memory
(bench/results/2026-12-05-h100-session34.md)."""
import argparse
import csv
import itertools
import math
import re
from collections import defaultdict

SMS = 132
KERNEL = dict(smbw=24, l2=3000, hs=50, rr=4000, hbm=0)
GRID = dict(smbw=[24, 32, 40, 48], l2=[2000, 3000, 4000], hs=[0, 50, 100],
            rr=[2000, 4000, 8000, 12000], hbm=[0, 1300, 1700, 2400])


def parse_tile(text):
    match = re.fullmatch(r"(\d+)x(\d+)(c\d+)?(s\d+)?", text)
    if not match:
        return None
    return int(match[1]), int(match[2]), int(match[4][1:]) if match[4] else 1


def read_sweeps(paths, config_prefix):
    times = defaultdict(lambda: defaultdict(list))  # (m, n, k) -> tile -> graph ms
    for path in paths:
        for row in csv.DictReader(open(path)):
            if not row["config"].startswith(config_prefix):
                continue
            try:
                ms = float(row["graph_ms"])
            except (KeyError, ValueError):
                continue
            if ms != ms or ms <= 0:
                continue
            tile = row["config"].split()[-1]
            if parse_tile(tile) is None:  # the plan's row: its note ends "[fp8dot block-scaled T]"
                tile = row["note"].split()[-1].rstrip("]")
            if parse_tile(tile) is None:
                continue
            times[(int(row["m"]), int(row["n"]), int(row["k"]))][tile].append(ms)
    return {shape: {t: sorted(v)[len(v) // 2] for t, v in tiles.items()}
            for shape, tiles in times.items()}


def cost(m, n, k, tile, p):
    """The kernel's model (CostedTiles) plus the HBM term; None where the kernel skips the split."""
    bm, bn, splits = tile
    k_blocks = math.ceil(k / 128)
    per_split = math.ceil(k_blocks / min(splits, k_blocks))
    if math.ceil(k_blocks / per_split) != splits:
        return None
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    if splits > 1 and tiles * (splits - 1) >= SMS:
        return None
    units = tiles * splits
    block_bytes = (bm + bn) * 128
    per_block = max(2 * 128 * bm * bn / 8192, block_bytes / p["smbw"]) + p["hs"]
    sm_time = math.ceil(units / SMS) * per_split * per_block
    l2_time = units * per_split * block_bytes / p["l2"]
    hbm_time = (m + n) * k / p["hbm"] if p["hbm"] else 0
    reduction = 0 if splits == 1 else p["rr"] * splits + 2 * units * bm * bn * 4 / p["l2"]
    return max(sm_time, l2_time, hbm_time) + reduction


def picks(sweeps, p):
    out = {}
    for shape, tiles in sweeps.items():
        costed = [(cost(*shape, parse_tile(t), p), t) for t in tiles]
        costed = [(c, t) for c, t in costed if c is not None]
        if costed:
            out[shape] = min(costed)[1]
    return out


def score(sweeps, p):
    """Sum over shapes of log(picked tile's time / fastest measured): 0 is perfect."""
    return sum(math.log(sweeps[s][t] / min(sweeps[s].values())) for s, t in picks(sweeps, p).items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--config", default="1x128 x 128x128 own",
                        help="the gpu_bench config whose tile rows to read (its name's start)")
    args = parser.parse_args()
    sweeps = read_sweeps(args.csv, args.config)
    if not sweeps:
        raise SystemExit(f"no '{args.config}' tile rows with graph times in {args.csv}")
    keys = list(GRID)
    fits = sorted((score(sweeps, dict(zip(keys, values))), values)
                  for values in itertools.product(*GRID.values()))
    best = dict(zip(keys, fits[0][1]))
    print(f"{len(sweeps)} shapes, {sum(map(len, sweeps.values()))} tile timings")
    print(f"kernel constants {KERNEL}: loss {math.exp(score(sweeps, KERNEL)):.3f}x (product)")
    print(f"best fit {best}: loss {math.exp(fits[0][0]):.3f}x")
    kernel_picks, best_picks = picks(sweeps, KERNEL), picks(sweeps, best)
    print("| M,N,K | fastest | kernel's pick | best fit's pick |")
    print("|---|---|---|---|")
    for shape in sorted(sweeps):
        tiles = sweeps[shape]
        fastest = min(tiles, key=tiles.get)
        cell = lambda t: f"{t} ({tiles[t] / tiles[fastest]:.3f}x)" if t else "-"
        print(f"| {','.join(map(str, shape))} | {fastest} ({tiles[fastest] * 1e3:.2f} µs) | "
              f"{cell(kernel_picks.get(shape))} | {cell(best_picks.get(shape))} |")


if __name__ == "__main__":
    main()
