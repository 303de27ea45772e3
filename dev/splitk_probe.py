#!/usr/bin/env python3
"""Tries split-K decompositions of the fast accumulator against the H200 golden vectors at
K=16384 (docs/accuracy.md, section 4): S slices of interleaved K-tiles of T elements (T = K/S is
the contiguous split), each slice one fast accumulator (13 bits, truncation, groups of 32), the
slices summed in f32. Prints the fraction of outputs identical to the H200's and the error.
Run from the repository root; needs numpy and ml_dtypes."""
import ml_dtypes
import numpy as np

BASE = "tests/cpu/testdata/h200/random/f8e4m3fnxf8e4m3fn_k16384_"


def load(path):
    a = np.load(path)
    if a.dtype.names:
        name = a.dtype.names[0]
        a = a[name].view(getattr(ml_dtypes, name))
    return a.astype(np.float64)


def cut(x, bits):
    e = np.floor(np.log2(np.abs(np.where(x == 0, 1, x))))
    quantum = np.exp2(e - bits)
    return np.where(x == 0, 0, np.trunc(x / quantum) * quantum)


def add_group(acc, products, bits=13):
    terms = np.vstack([acc[None, :], products])
    largest = np.max(np.abs(terms), axis=0)
    quantum = np.exp2(np.floor(np.log2(np.where(largest == 0, 1, largest))) - bits)
    return cut(np.trunc(terms / quantum).sum(axis=0) * quantum, bits)


for dist in ("positive", "symmetric"):
    a, b = load(BASE + dist + ".lhs.npy"), load(BASE + dist + ".rhs.npy")
    gpu = np.load(BASE + dist + ".fast.npy").astype(np.float64).ravel()
    m, k = a.shape
    products = (a[:, None, :] * b.T[None, :, :]).reshape(m * b.shape[1], k)
    exact = products.sum(axis=1)
    print(dist, "H200 error", np.linalg.norm(gpu - exact) / np.linalg.norm(exact))
    for tile in (128, 512, 2048, 4096):
        for slices in (2, 4, 8):
            out = np.zeros(len(exact), dtype=np.float32)
            for s in range(slices):
                acc = np.zeros(len(exact))
                for t in range(s, k // tile, slices):
                    for k0 in range(t * tile, (t + 1) * tile, 32):
                        acc = add_group(acc, products[:, k0:k0 + 32].T)
                out = (out + acc.astype(np.float32)).astype(np.float32)
            o = out.astype(np.float64)
            print(f"  tile {tile} slices {slices}: identical {np.mean(o == gpu):.3f}, "
                  f"error {np.linalg.norm(o - exact) / np.linalg.norm(exact):.3e}", flush=True)
