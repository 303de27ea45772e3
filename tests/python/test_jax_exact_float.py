"""fp8dot.jax._exact_float: f32 division by an FP8 maximum and f32 reciprocal, correctly rounded
in integer arithmetic (XLA's own division is not: it multiplies by a reciprocal of a constant
divisor, and on the GPU its f32 division is approximate). Checked against float64 arithmetic
rounded once to f32 over normal, subnormal and extreme inputs, on the CPU and the GPU."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from test_jax import PLATFORMS, device  # noqa: E402

from fp8dot.jax._exact_float import divide_by_fp8_max, reciprocal  # noqa: E402


def f32_values(seed):
    """Positive f32 values over the whole range: random bit patterns (subnormals included),
    powers of two, the extremes, exact quotients ((7n + 3.5) / (7 · 2^k)), and subnormal
    quotients that are rounding ties (21 · 2^-144 / 448 and 35 · 2^-144 / 448)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(1, 0x7F800000, size=20000, dtype=np.uint32)
    values = [bits.view(np.float32),
              np.exp2(np.arange(-149, 128, dtype=np.float64)).astype(np.float32),
              np.array([np.finfo(np.float32).tiny, np.finfo(np.float32).max, 448.0, 57344.0,
                        1.0, 3.0, 7.0, 0.5, 21 * 2.0**-144, 35 * 2.0**-144], np.float32),
              (np.arange(1, 4000, dtype=np.float32) * 7 + 3.5)]
    return np.concatenate(values).astype(np.float32)


def rounded(exact):
    """float64 -> f32 once, which is the correctly rounded f32 here: an inexact x / (7 · 2^k) has
    bits that repeat with period 3 (never a run of 24 zeros or ones past the f32 significand),
    and 1 / x is at least 2^-50 relative from an f32 midpoint; float64's error is 2^-53."""
    with np.errstate(over="ignore"):
        return exact.astype(np.float32)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("fp8_max", [448.0, 57344.0])
def test_divide_by_fp8_max_is_the_correctly_rounded_quotient(platform, fp8_max):
    x = f32_values(1)
    got = np.asarray(jax.jit(lambda v: divide_by_fp8_max(v, fp8_max))(
        jax.device_put(x, device(platform))))
    np.testing.assert_array_equal(got.view(np.uint32),
                                  rounded(x.astype(np.float64) / fp8_max).view(np.uint32))
    # The test can fail: XLA's own quotient differs on these inputs.
    assert (x * np.float32(1 / fp8_max) != rounded(x.astype(np.float64) / fp8_max)).any()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_reciprocal_is_the_correctly_rounded_reciprocal(platform):
    x = f32_values(2)
    got = np.asarray(jax.jit(reciprocal)(jax.device_put(x, device(platform))))
    np.testing.assert_array_equal(got.view(np.uint32),
                                  rounded(1.0 / x.astype(np.float64)).view(np.uint32))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_special_values_are_those_of_ieee_division(platform):
    x = np.array([0.0, np.inf, np.nan], np.float32)
    quotient = np.asarray(jax.jit(lambda v: divide_by_fp8_max(v, 448.0))(
        jax.device_put(x, device(platform))))
    np.testing.assert_array_equal(quotient, [0.0, np.inf, np.nan])
    x = np.array([0.0, -0.0, np.inf, -np.inf, -2.0, -3.0], np.float32)
    inverse = np.asarray(jax.jit(reciprocal)(jax.device_put(x, device(platform))))
    with np.errstate(divide="ignore"):
        expected = np.float32(1) / x
    np.testing.assert_array_equal(inverse.view(np.uint32), expected.view(np.uint32))  # signs too
    assert np.isnan(np.asarray(jax.jit(reciprocal)(jax.device_put(np.float32(np.nan),
                                                                  device(platform)))))


def test_a_maximum_not_seven_times_a_power_of_two_is_refused():
    with pytest.raises(ValueError, match="not 7"):
        divide_by_fp8_max(jnp.float32(1.0), 240.0)
