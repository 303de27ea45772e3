#!/usr/bin/env python3
"""fp8dot's narrowing conversions agree bit for bit with ml_dtypes (skipped without ml_dtypes).

Inputs: every value of each narrow type, the midpoints between neighbours and the f32 values
next to them, specials, and a million random f32 bit patterns; f64 inputs likewise, including
values that differ from a midpoint only below f32 precision. fp8dot takes f64 to float8 and
bfloat16 through f32 (the GPU kernels it models hold f32), and f64 to float16 in one rounding, as
numpy does. ml_dtypes before 0.7 converted f64 through f32 too; from 0.7 it rounds f64 once
(ml_dtypes#401), so for those types the f64 inputs are compared with ml_dtypes' conversion of
their f32 rounding.
"""
import subprocess
import sys

try:
    import numpy as np
    import ml_dtypes
except ImportError as error:
    print(f"SKIPPED: {error} (pip install ml_dtypes numpy)")
    sys.exit(77)

TOOL = sys.argv[1]
TYPES = {
    "f8e4m3fn": (ml_dtypes.float8_e4m3fn, np.uint8),
    "f8e5m2": (ml_dtypes.float8_e5m2, np.uint8),
    "bf16": (ml_dtypes.bfloat16, np.uint16),
    "f16": (np.float16, np.uint16),
}


def inputs_for(narrow, bits, wide):
    codes = np.arange(np.iinfo(bits).max + 1, dtype=np.int64).astype(bits)
    with np.errstate(invalid="ignore"):
        values = codes.view(narrow).astype(np.float64)
    finite = np.unique(values[np.isfinite(values)])
    mids = (finite[:-1] + finite[1:]) / 2
    points = np.concatenate([finite, mids, [finite[-1] * 1.0625, finite[-1] * 1.2, finite[-1] * 4]])
    with np.errstate(over="ignore"):
        points = np.concatenate([points, -points]).astype(wide)
    near = np.concatenate([np.nextafter(points, wide(np.inf)), np.nextafter(points, wide(-np.inf))])
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], dtype=wide)
    rng = np.random.default_rng(20261130)
    if wide == np.float32:
        random = rng.integers(0, 2**32, size=1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        random = rng.integers(0, 2**63, size=1 << 18, dtype=np.uint64).view(np.float64)
        # Midpoints nudged below f32 resolution: only a single rounding gets these right.
        nudged = mids * (1 + 2.0**-40)
        random = np.concatenate([random, nudged, -nudged, mids * (1 - 2.0**-40)])
    return np.concatenate([points, near, specials, random.astype(wide)])


failures = 0
for name, (narrow, bits) in TYPES.items():
    for wide, wide_name in ((np.float32, "f32"), (np.float64, "f64")):
        x = inputs_for(narrow, bits, wide)
        with np.errstate(over="ignore", invalid="ignore"):
            through_f32 = wide == np.float64 and narrow is not np.float16
            expected = (x.astype(np.float32) if through_f32 else x).astype(narrow).view(bits)
        run = subprocess.run([TOOL, name, wide_name], input=x.tobytes(), capture_output=True, check=True)
        got = np.frombuffer(run.stdout, dtype=bits)
        assert got.size == x.size, (name, got.size, x.size)
        # NaN payloads are not part of the contract: both NaN with the same sign is agreement.
        exp_vals = expected.view(narrow).astype(np.float64)
        got_vals = got.view(narrow).astype(np.float64)
        both_nan = np.isnan(exp_vals) & np.isnan(got_vals) & (np.signbit(exp_vals) == np.signbit(got_vals))
        bad = (got != expected) & ~both_nan
        count = int(bad.sum())
        print(f"{name} from {wide_name}: {x.size} inputs, {count} disagreements")
        if count:
            i = np.flatnonzero(bad)[:5]
            print("  first:", [(float(x[j]), hex(int(expected[j])), hex(int(got[j]))) for j in i])
        failures += count

print("PASSED" if failures == 0 else f"FAILED: {failures} disagreements")
sys.exit(1 if failures else 0)
