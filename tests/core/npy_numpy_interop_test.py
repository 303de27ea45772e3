#!/usr/bin/env python3
"""fp8dot's .npy files load in numpy (and as ml_dtypes types), and numpy's load in fp8dot.

Runs `fp8dot dot --output` for each output type, reads the file with numpy, and checks the
values against the same run's f64 rendering; then feeds numpy-written inputs back to fp8dot.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import ml_dtypes
except ImportError as error:
    print(f"SKIPPED: {error} (pip install ml_dtypes numpy)")
    sys.exit(77)

CLI = sys.argv[1]
tmp = tempfile.mkdtemp()


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=True).stdout


# 1. Outputs of every type load in numpy; FP8/bf16 come as a named field viewable via ml_dtypes.
reference_path = os.path.join(tmp, "d_f32.npy")
run("dot", "--m", "8", "--n", "8", "--k", "16", "--backend", "cpu", "--out-type", "f32",
    "--output", reference_path)
d32 = np.load(reference_path)
assert d32.dtype == np.float32 and d32.shape == (8, 8), d32.dtype
for out_type, ml_type in (("f8e4m3fn", ml_dtypes.float8_e4m3fn), ("f8e5m2", ml_dtypes.float8_e5m2),
                          ("bf16", ml_dtypes.bfloat16), ("f16", np.float16)):
    path = os.path.join(tmp, f"d_{out_type}.npy")
    run("dot", "--m", "8", "--n", "8", "--k", "16", "--backend", "cpu", "--out-type", out_type,
        "--output", path)
    raw = np.load(path)
    if raw.dtype.names:
        field = raw.dtype.names[0]
        assert field == np.dtype(ml_type).name, (field, ml_type)
        typed = raw[field].view(ml_type)
    else:
        typed = raw
    assert typed.shape == (8, 8)
    # fp8dot rounds the same f32-accumulated D; compare with numpy's own rounding of d32.
    expected = d32.astype(ml_type)
    mismatch = np.sum(typed.astype(np.float32) != expected.astype(np.float32))
    # The f32 output itself was rounded from f64 once more: allow double-rounding differences only.
    assert mismatch <= 2, (out_type, mismatch)
    print(f"{out_type}: loads in numpy as {raw.dtype}, {mismatch} double-rounding differences")

# 2. numpy-written inputs (including ml_dtypes arrays saved raw) load in fp8dot.
rng = np.random.default_rng(7)
a = rng.uniform(-4, 4, (16, 32)).astype(ml_dtypes.float8_e4m3fn)
b = rng.uniform(-4, 4, (32, 8)).astype(ml_dtypes.float8_e4m3fn)
np.save(os.path.join(tmp, "a.npy"), a)  # descr '<V1': fp8dot needs --lhs-type
np.save(os.path.join(tmp, "b.npy"), b)
out = os.path.join(tmp, "d.npy")
run("dot", "--lhs", os.path.join(tmp, "a.npy"), "--rhs", os.path.join(tmp, "b.npy"),
    "--lhs-type", "f8e4m3fn", "--rhs-type", "f8e4m3fn", "--precision", "highest", "--backend", "cpu",
    "--cpu-path", "reference", "--output", out)
d = np.load(out)
expected = a.astype(np.float64) @ b.astype(np.float64)
assert np.allclose(d, expected, rtol=1e-6, atol=1e-6), np.max(np.abs(d - expected))
# Fortran-ordered f32 input.
af = np.asfortranarray(rng.uniform(-1, 1, (16, 32)).astype(np.float32))
np.save(os.path.join(tmp, "af.npy"), af)
np.save(os.path.join(tmp, "bf.npy"), rng.uniform(-1, 1, (32, 8)).astype(np.float32))
run("dot", "--lhs", os.path.join(tmp, "af.npy"), "--rhs", os.path.join(tmp, "bf.npy"),
    "--precision", "highest", "--backend", "cpu", "--cpu-path", "reference", "--output", out)
d = np.load(out)
expected = af.astype(np.float64) @ np.load(os.path.join(tmp, "bf.npy")).astype(np.float64)
assert np.allclose(d, expected, rtol=1e-6, atol=1e-6)
print("PASSED")
