#!/usr/bin/env python3
"""Finds where cuBLASLt's fast-accumulation kernels restart the FP8 accumulator along K (split-K
slices), from crafted dot products (docs/accuracy.md, section 4).

Row i of A is 2^-6 everywhere except one marker 256 at position q_i; B is all ones. In one fast
accumulator (13 fraction bits, truncation) every 2^-6 product that meets the 256 in the same
group or later in the same run vanishes (the quantum at 256 is 2^-5), every other one is kept
exactly. So D[i, :] = 256 + 2^-6 * (K - 1 - lost_i), and lost_i + group_start(q_i) is where the
accumulator run that holds q_i ends: the end of q_i's slice.

  gen DIR M K OFFSETS...   writes DIR/m{M}_k{K}_o{OFF}.lhs.npy / .rhs.npy (q_i = i*K/M + OFF)
  analyze DIR              reads the matching .out.npy files and prints each slice end seen
Run from the repository root; needs numpy and ml_dtypes.
"""
import glob
import os
import re
import sys

import ml_dtypes
import numpy as np

MARKER = 256.0
SMALL = 2.0**-6
GROUP = 32


def save_fp8(path, values):
    bits = values.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    np.save(path, bits.view(np.dtype([("float8_e4m3fn", "u1")])))


def generate(directory, m, k, offsets):
    os.makedirs(directory, exist_ok=True)
    for offset in offsets:
        a = np.full((m, k), SMALL)
        for i in range(m):
            a[i, i * (k // m) + offset] = MARKER
        stem = os.path.join(directory, f"m{m}_k{k}_o{offset}")
        save_fp8(stem + ".lhs.npy", a)
        save_fp8(stem + ".rhs.npy", np.ones((k, m)))


def analyze(directory):
    for out in sorted(glob.glob(os.path.join(directory, "*.out.npy"))):
        m, k, offset = (int(x) for x in re.search(r"m(\d+)_k(\d+)_o(\d+)", out).groups())
        d = np.load(out).astype(np.float64)
        ends = []
        for i in range(m):
            q = i * (k // m) + offset
            lost = k - 1 - (d[i, 0] - MARKER) / SMALL
            same = np.all(d[i] == d[i, 0])
            ends.append(f"{q}->{int(q // GROUP * GROUP + lost + 1)}{'' if same else '?'}")
        print(f"M={m} K={k} offset {offset}: marker->run end  " + " ".join(ends))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        generate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), [int(x) for x in sys.argv[5:]])
    else:
        analyze(sys.argv[2])
