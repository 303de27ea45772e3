"""Hostile and malformed input from Python (issue #13): every bad array, description or option is
a ValueError or TypeError naming what is wrong, never a crash, a hang or a silent answer."""

import random

import numpy as np
import pytest

import fp8dot
from fp8dot import _core

ml_dtypes = pytest.importorskip("ml_dtypes")
torch = pytest.importorskip("torch")

E4M3 = ml_dtypes.float8_e4m3fn
A, B = np.ones((4, 32), E4M3), np.ones((32, 8), E4M3)
T4M3 = torch.float8_e4m3fn

def _freed(tensor):
    """`tensor` after its storage shrank to 0 bytes (as FSDP2 frees a gathered parameter between
    its passes): it keeps its shape."""
    tensor.untyped_storage().resize_(0)
    return tensor


BAD_CALLS = {
    # Views a dense kernel cannot read in place are refused, not copied behind the user's back.
    "reversed view": (lambda: fp8dot.scaled_dot(A[::-1], B), ValueError, "not a dense layout"),
    "strided view": (lambda: fp8dot.scaled_dot(np.ones((8, 64), E4M3)[::2, ::2], B), ValueError,
                     "not a dense layout"),
    "broadcast view": (lambda: fp8dot.scaled_dot(np.broadcast_to(np.ones((1, 32), E4M3), (4, 32)),
                                                 B), ValueError, "stride 0"),
    "torch strided view": (lambda: fp8dot.scaled_dot(torch.ones(8, 64).to(T4M3)[::2, ::2],
                                                     torch.ones(32, 8).to(T4M3)), ValueError,
                           "not a dense layout"),
    "torch freed storage": (lambda: fp8dot.scaled_dot(_freed(torch.ones(4, 32).to(T4M3)),
                                                      torch.ones(32, 8).to(T4M3)), ValueError,
                            "lhs: its storage holds 0 bytes but .* reach 128 bytes"),
    "big-endian scale": (lambda: fp8dot.scaled_dot(A, B, lhs_scale=np.ones((), ">f4")),
                         ValueError, "lhs_scale: dtype '>f4' is not in this machine's byte order"),
    "big-endian input": (lambda: fp8dot.quantize(np.ones((4, 32), ">f4"), "float8_e4m3fn"),
                         ValueError, "is not in this machine's byte order"),
    "empty array": (lambda: fp8dot.scaled_dot(np.ones((0, 32), E4M3), B), ValueError,
                    "every dim must be positive"),
    "0-d array": (lambda: fp8dot.scaled_dot(np.ones((), E4M3), B), ValueError, "rank 0"),
    "object dtype": (lambda: fp8dot.scaled_dot(np.array([[None]]), B), ValueError,
                     "dtype object is not supported"),
    "integer dtype": (lambda: fp8dot.scaled_dot(np.ones((4, 32), np.int8), B), ValueError,
                      "dtype int8 is not supported"),
    "a list": (lambda: fp8dot.scaled_dot([[1.0]], B), TypeError, "numpy array or a torch tensor"),
    "None": (lambda: fp8dot.scaled_dot(None, B), TypeError, "got NoneType"),
    "numpy with torch": (lambda: fp8dot.scaled_dot(torch.ones(4, 32).to(T4M3), B), TypeError,
                         "must both be numpy arrays or both torch tensors"),
    "integer scale": (lambda: fp8dot.scaled_dot(A, B, lhs_scale=np.ones((), np.int32)),
                      ValueError, "lhs_scale: dtype int32"),
    "float64 scale": (lambda: fp8dot.scaled_dot(A, B, lhs_scale=np.ones((), np.float64)),
                      ValueError, "lhs_scale must be float32"),
    "scale of no mode's shape": (lambda: fp8dot.scaled_dot(A, B, lhs_scale=np.ones((3, 3),
                                                                                  np.float32)),
                                 ValueError, "scale"),
    "bf16 output scale": (lambda: fp8dot.scaled_dot(A, B, out_dtype=E4M3,
                                                    out_scale=np.ones((), ml_dtypes.bfloat16)),
                          ValueError, "out_scale must be one float32, got bfloat16"),
    "output scale of 3": (lambda: fp8dot.scaled_dot(A, B, out_dtype=E4M3,
                                                    out_scale=np.ones((3,), np.float32)),
                          ValueError, r"out_scale must be one float32, got float32 of shape \(3,\)"),
    "integer output": (lambda: fp8dot.scaled_dot(A, B, out_dtype="int8"), ValueError,
                       "dtype int8 is not supported"),
    "unknown backend": (lambda: fp8dot.scaled_dot(A, B, backend="nope"), ValueError,
                        "unknown backend 'nope'"),
    "contracting dim out of range": (lambda: fp8dot.scaled_dot(
        A, B, dimension_numbers=(((5,), (0,)), ((), ()))), ValueError, "out of range"),
    "NaN alpha": (lambda: fp8dot.scaled_dot(A, B, alpha=float("nan")), ValueError,
                  "must be finite"),
    "unknown precision": (lambda: fp8dot.scaled_dot(A, B, precision="fastest"), ValueError,
                          "precision"),
    "three precisions": (lambda: fp8dot.scaled_dot(A, B, precision=("a", "b", "c")), ValueError,
                         "pair"),
    "mismatched K": (lambda: fp8dot.scaled_dot(A, np.ones((16, 8), E4M3)), ValueError,
                     "contracting"),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_call_is_a_clear_exception(name):
    call, error, text = BAD_CALLS[name]
    with pytest.raises(error, match=text):
        call()


def _dot(lhs, rhs):
    return _core.Dot(lhs, rhs, None, ("DEFAULT", "DEFAULT"), None, "float32", None, None, None,
                     None, None, None, None, 1.0, 0.0, False, False)


@pytest.mark.parametrize("lhs,text", [
    (("float8_e4m3fn", (2**40, 2**40), (2**40, 1)), "too many elements"),
    (("float8_e4m3fn", (2**62, 4), (4, 1)), "too many elements"),
    (("float8_e4m3fn", (-1, 4), (4, 1)), "negative size"),
    (("float8_e4m3fn", (4, 4), (1,)), "1 strides for the 2 dims"),
    (("float8_e4m3fn", (4, 4), (-4, 1)), "not a dense layout"),
    (("float8_e4m3fn", (4, 4), (2**62, 1)), "not a dense layout"),
    (("no such dtype", (4, 4), (4, 1)), "not supported"),
])
def test_malformed_array_descriptions_are_value_errors(lhs, text):
    with pytest.raises(ValueError, match=text):
        _dot(lhs, ("float8_e4m3fn", (4, 4), (4, 1)))


def test_random_descriptions_never_crash():
    """2000 random (dtype, dims, strides) pairs straight into the binding: each makes a Dot or
    raises ValueError; the process surviving is the other half of the assertion."""
    rng = random.Random(13)
    names = ["float8_e4m3fn", "float8_e5m2", "bfloat16", "float32", "f64", "int8", ""]
    sizes = [0, 1, 2, 3, 16, 128, -1, -2**63, 2**31, 2**62, 2**63 - 1]
    made = 0
    for _ in range(2000):
        described = []
        for _side in range(2):
            rank = rng.randint(0, 4)
            dims = tuple(rng.choice(sizes) for _ in range(rank))
            strides = tuple(rng.choice(sizes) for _ in range(rank + rng.choice([0, 0, 0, 1, -1])))
            described.append((rng.choice(names), dims, strides))
        try:
            _dot(*described)
            made += 1
        except (ValueError, OverflowError, TypeError):
            pass  # OverflowError/TypeError: nanobind refusing a value beyond int64
    assert made < 2000  # most are refused; the few valid ones are real dots


def test_bad_input_from_jax_is_a_clear_exception():
    jnp = pytest.importorskip("jax.numpy")
    fj = pytest.importorskip("fp8dot.jax")
    a, b = jnp.ones((4, 32), jnp.float8_e4m3fn), jnp.ones((32, 8), jnp.float8_e4m3fn)
    with pytest.raises(ValueError, match="dtype int32 is not supported"):
        fj.scaled_dot_general(a.astype(jnp.int32), b)
    with pytest.raises(ValueError, match="every dim must be positive"):
        fj.scaled_dot_general(jnp.ones((0, 32), jnp.float8_e4m3fn), b)
    with pytest.raises(ValueError, match="must be float32"):
        fj.scaled_dot_general(a, b, rhs_scale=jnp.ones((), jnp.bfloat16))
    with pytest.raises(ValueError, match="out_scale must be one float32"):
        fj.scaled_dot_general(a, b, preferred_element_type=jnp.float8_e4m3fn,
                              output_scale=jnp.ones((2,), jnp.float32))
    with pytest.raises(TypeError, match="lhs must be a JAX or numpy array, got list"):
        fj.scaled_dot_general([[1.0]], b)
