"""Fits the own GEMM's tile cost model (CostedTiles in src/cuda/kernels/block_scaled_gemm_tiles.cc)
to gpu_bench tile sweeps: for each shape, the time of the tile the model picks against the
fastest tile measured. Reads gpu_bench CSVs or logs (rows of "... own <tile>" configs, or the
plan's own row, whose note names its tile), CUDA-graph times; a log keeps the rows a run wrote
before a timeout cut it, its CSV may not. Prints the kernel's constants' losses, the best fit over
a grid, and per shape what each picks.

  python3 bench/fit_tile_model.py FILE... [--config NAME] [--dram-bytes-per-clock X]

The fastest tile depends on the GPU's DRAM (bench/results/2026-12-05-h100-session34.md), which the
model weighs where it knows it: pass the GPU's peak DRAM bytes per SM clock (gpu_bench's header:
TB/s / MHz; an H100 SXM 1692, an H200 2424). The kernel's constants were fitted by running this on
an H200's sweep and an H100's (bench/results/2026-12-06-h100-session41.md) and keeping those that
pick well on both."""
import argparse
import csv
import itertools
import math
import re
from collections import defaultdict

SMS = 132
# The tiles in the kernel's listed order (FP8DOT_OWN_GEMM_TILES), which breaks its cost ties.
TILE_ORDER = ["256x128", "256x64", "192x128", "128x192", "128x128", "128x64", "128x32", "64x128",
              "64x64", "64x32", "64x16"]
KERNEL = dict(smbw=24, l2=3000, hs=50, rr=4000, dram_efficiency=0.81, unhidden=0.3)
GRID = dict(smbw=[24, 32], l2=[2000, 3000, 4000], hs=[0, 50, 100], rr=[2000, 4000, 6000],
            dram_efficiency=[0.7, 0.75, 0.81, 0.9], unhidden=[0, 0.1, 0.2, 0.3, 0.4])


def parse_tile(text):
    match = re.fullmatch(r"(\d+)x(\d+)(c\d+)?(s\d+)?", text)
    if not match:
        return None
    return int(match[1]), int(match[2]), int(match[4][1:]) if match[4] else 1


def log_rows(path):
    """A gpu_bench log's table as CSV-like rows (graph TFLOP/s turned into ms)."""
    for line in open(path):
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) < 14 or not re.fullmatch(r"\d+,\d+,\d+", cells[1]):
            continue
        m, n, k = map(int, cells[1].split(","))
        try:
            graph_ms = 2 * m * n * k / (float(cells[6]) * 1e9)
        except ValueError:
            continue
        yield dict(m=m, n=n, k=k, config=cells[2], graph_ms=graph_ms, note=cells[13])


def read_sweeps(paths, config_prefix):
    times = defaultdict(lambda: defaultdict(list))  # (m, n, k) -> tile -> graph ms
    for path in paths:
        rows = log_rows(path) if path.endswith(".log") else csv.DictReader(open(path))
        for row in rows:
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


def cost(m, n, k, tile, p, dram_bytes_per_clock):
    """The kernel's model (CostedTiles); None where the kernel skips the split."""
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
    on_chip = max(sm_time, l2_time)
    dram_rate = p["dram_efficiency"] * dram_bytes_per_clock
    dram_time = (m + n) * k / dram_rate if dram_rate else 0
    reduction = 0 if splits == 1 else p["rr"] * splits + 2 * units * bm * bn * 4 / p["l2"]
    return max(on_chip, dram_time + p["unhidden"] * on_chip) + reduction


def listed_order(tile):
    bm, bn, splits = parse_tile(tile)
    return TILE_ORDER.index(f"{bm}x{bn}"), splits


def picks(sweeps, p, dram_bytes_per_clock):
    out = {}
    for shape, tiles in sweeps.items():
        costed = [(cost(*shape, parse_tile(t), p, dram_bytes_per_clock), listed_order(t), t)
                  for t in tiles]
        costed = [c for c in costed if c[0] is not None]
        if costed:
            out[shape] = min(costed)[2]
    return out


def score(sweeps, p, dram_bytes_per_clock):
    """Sum over shapes of log(picked tile's time / fastest measured): 0 is perfect."""
    return sum(math.log(sweeps[s][t] / min(sweeps[s].values()))
               for s, t in picks(sweeps, p, dram_bytes_per_clock).items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="gpu_bench CSVs or logs")
    parser.add_argument("--config", default="1x128 x 128x128 own",
                        help="the gpu_bench config whose tile rows to read (its name's start)")
    parser.add_argument("--dram-bytes-per-clock", type=float, default=0,
                        help="the GPU's peak DRAM bytes per SM clock (0: DRAM left out)")
    args = parser.parse_args()
    dram = args.dram_bytes_per_clock
    sweeps = read_sweeps(args.files, args.config)
    if not sweeps:
        raise SystemExit(f"no '{args.config}' tile rows with graph times in {args.files}")
    keys = list(GRID)
    fits = sorted((score(sweeps, dict(zip(keys, values)), dram), values)
                  for values in itertools.product(*GRID.values()))
    best = dict(zip(keys, fits[0][1]))
    print(f"{len(sweeps)} shapes, {sum(map(len, sweeps.values()))} tile timings")
    print(f"kernel constants {KERNEL}: loss {math.exp(score(sweeps, KERNEL, dram)):.3f}x (product)")
    print(f"best fit {best}: loss {math.exp(fits[0][0]):.3f}x")
    kernel_picks, best_picks = picks(sweeps, KERNEL, dram), picks(sweeps, best, dram)
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
