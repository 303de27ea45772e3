"""Correctly rounded f32 division by an FP8 maximum and f32 reciprocal, in integer arithmetic.

fp8dot's quantisation rule (include/fp8dot/quantize.h) takes scale = amax / max(FP8 type) and
x · (1 / scale), each rounded once to f32. XLA does not keep either correctly rounded: it turns a
division by a constant into a multiplication by the reciprocal (on every backend), and on the GPU
its f32 division itself is approximate; both miss the correctly rounded result by one ulp for
about half of all inputs. Integer operations are exact everywhere, so these functions compute the
significand with them and round it once, to nearest even, into the f32 bit pattern (subnormal
results and overflow included). They run once per scale, not per element.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

_U32 = jnp.uint32
_INFINITY_BITS = 0x7F800000
_SIGNIFICAND_BITS = 23


def _u32(value):
    return jnp.asarray(value, _U32)


def _significand_and_exponent(x):
    """x = m · 2^e for finite x > 0, with m normalised to [2^23, 2^24)."""
    bits = lax.bitcast_convert_type(x, _U32)
    biased = (bits >> _SIGNIFICAND_BITS).astype(jnp.int32)
    fraction = bits & _u32(0x7FFFFF)
    m = jnp.where(biased > 0, fraction | _u32(0x800000), fraction)
    e = jnp.where(biased > 0, biased, 1) - 150
    # Subnormal x: shift its significand up to 24 bits (callers pass no zeros).
    shift = lax.clz(m).astype(jnp.int32) - 8
    return m << shift.astype(_U32), e - shift


def _round_to_f32(t, sticky, e):
    """The f32 nearest (ties to even) to (t + f) · 2^e, where t < 2^31 has at least 25 bits and f
    in [0, 1) is nonzero exactly when `sticky`."""
    length = 32 - lax.clz(t).astype(jnp.int32)  # bits of t
    biased = e + length - 1 + 127  # of the result, before rounding
    # Bits of t dropped: down to 24 significant bits, more where the result is subnormal.
    drop = length - 24 + jnp.maximum(0, 1 - biased)
    underflows = drop > 31
    drop = jnp.minimum(drop, 31).astype(_U32)
    kept = t >> drop
    remainder = t & ((_u32(1) << drop) - _u32(1))
    half = _u32(1) << (drop - _u32(1))
    up = (remainder > half) | ((remainder == half) & (sticky | ((kept & _u32(1)) == 1)))
    kept = kept + up.astype(_U32)
    # A normal result's exponent field plus its significand (whose carry into bit 24 raises the
    # exponent); a subnormal result is its significand alone (2^23 is the smallest normal).
    bits = jnp.where(biased >= 1,
                     (jnp.maximum(biased, 1) - 1).astype(_U32) * _u32(1 << _SIGNIFICAND_BITS) +
                     kept, kept)
    bits = jnp.where(underflows, _u32(0), bits)
    bits = jnp.where(biased >= 255, _u32(_INFINITY_BITS), bits)  # a carry into 255 is inf too
    return lax.bitcast_convert_type(bits, jnp.float32)


def divide_by_fp8_max(x, fp8_max: float):
    """x / fp8_max correctly rounded to f32, for x >= 0 (0, inf and NaN are returned as they are,
    as IEEE division gives them). fp8_max is 7 · 2^k, as both FP8 types' maxima are (448,
    57344)."""
    k = int(math.log2(fp8_max / 7))
    if fp8_max != 7 * 2.0**k:
        raise ValueError(f"divide_by_fp8_max: {fp8_max} is not 7 * 2^k")
    x = jnp.asarray(x, jnp.float32)
    regular = jnp.isfinite(x) & (x > 0)
    m, e = _significand_and_exponent(jnp.where(regular, x, 1.0))
    # m · 2^7 / 7 has 28 or 29 bits; its remainder says whether the quotient is exact.
    numerator = m << _u32(7)
    quotient = numerator // _u32(7)
    sticky = numerator != quotient * _u32(7)
    result = _round_to_f32(quotient, sticky, e - 7 - k)
    return jnp.where(regular, result, x)  # 0, inf and NaN are their own quotients


def reciprocal(x):
    """1 / x correctly rounded to f32 (±0 gives ±inf, ±inf gives ±0, NaN stays NaN)."""
    x = jnp.asarray(x, jnp.float32)
    magnitude = jnp.abs(x)
    regular = jnp.isfinite(magnitude) & (magnitude > 0)
    m, e = _significand_and_exponent(jnp.where(regular, magnitude, 1.0))
    # floor(2^48 / m) by long division, 8 bits at a time (the remainder stays below m < 2^24,
    # so remainder · 2^8 fits 32 bits): 25 bits, 2^48 / m being in (2^24, 2^25] (26 for m = 2^23,
    # a power of two).
    quotient = _u32(0)
    remainder = jnp.ones_like(m)
    for _ in range(6):
        remainder = remainder << _u32(8)
        quotient = (quotient << _u32(8)) | (remainder // m)
        remainder = remainder % m
    result = _round_to_f32(quotient, remainder != 0, -48 - e)
    special = jnp.where(magnitude == 0, jnp.float32(jnp.inf),
                        jnp.where(jnp.isinf(magnitude), jnp.float32(0.0), magnitude))
    return jnp.copysign(jnp.where(regular, result, special), x)
