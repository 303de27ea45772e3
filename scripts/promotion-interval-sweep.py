#!/usr/bin/env python3
"""The error of promoted accumulation at each promotion interval, between fast and promoted.

Runs `fp8dot accuracy` on the CPU emulation once per interval (the own kernel's outer-scale
mode is bit-identical to it at every interval: tests/cuda/cuda_own_gemm_test.cc) and prints one
markdown table: relative Frobenius error against the exact product, per K and distribution, for
fast accumulation and for promotion every 128 ... 4096 K-elements.

  scripts/promotion-interval-sweep.py [--fp8dot build/fp8dot] [--m 64] [--n 64]
      [--k-values 1024 4096 16384] [--intervals 128 256 ...] [--csv out.csv]
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fp8dot", default="build/fp8dot")
    parser.add_argument("--m", type=int, default=64)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--k-values", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--intervals", type=int, nargs="+",
                        default=[128, 256, 512, 1024, 2048, 4096])
    parser.add_argument("--distributions", nargs="+", default=["symmetric", "positive"])
    parser.add_argument("--lhs-type", default="f8e4m3fn")
    parser.add_argument("--csv", help="also write the table as CSV")
    args = parser.parse_args()

    fast = {}
    promoted = {}  # (k, distribution) -> {interval: error}
    with tempfile.TemporaryDirectory() as folder:
        for interval in args.intervals:
            path = os.path.join(folder, f"{interval}.csv")
            command = [args.fp8dot, "accuracy", "--backend", "cpu", "--m", str(args.m),
                       "--n", str(args.n), "--lhs-type", args.lhs_type,
                       "--promotion-interval", str(interval), "--csv", path,
                       "--k-values", *map(str, args.k_values),
                       "--distributions", *args.distributions]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
            with open(path) as f:
                for row in csv.DictReader(f):
                    key = (int(row["k"]), row["distribution"])
                    fast[key] = float(row["fast_error"])
                    promoted.setdefault(key, {})[interval] = float(row["promoted_error"])

    header = ["K", "distribution", "fast"] + [f"every {i}" for i in args.intervals]
    rows = [[str(k), d, f"{fast[(k, d)]:.2e}"] +
            [f"{promoted[(k, d)][i]:.2e}" for i in args.intervals]
            for (k, d) in sorted(fast)]
    print(f"# Promoted accumulation by promotion interval: {args.lhs_type} x f8e4m3fn, "
          f"M={args.m} N={args.n}, relative Frobenius error vs the exact product "
          "(CPU emulation of the H200's accumulator)\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows(rows)


if __name__ == "__main__":
    main()
