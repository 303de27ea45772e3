"""fp8dot.scaled_dot, resolve_accumulation and explain on numpy arrays and torch tensors."""

import os

import numpy as np
import pytest
import torch

import fp8dot
import fp8dot.torch  # noqa: F401  (registers torch.ops.fp8dot)
from conftest import DEVICES, gpu
from tolerances import accumulation_tolerance, output_rounding, relative_frobenius

ml_dtypes = pytest.importorskip("ml_dtypes")

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def random_fp8(shape, dtype=E4M3, seed=0, device="cpu"):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator).to(dtype).to(device)


def exact_product(lhs, rhs, lhs_scale=None, rhs_scale=None):
    """fp64 product of the FP8 values with the scales broadcast back over their blocks."""
    a = lhs.double().cpu() * (1.0 if lhs_scale is None else expand_scale(lhs_scale, lhs.shape, True))
    b = rhs.double().cpu() * (1.0 if rhs_scale is None else expand_scale(rhs_scale, rhs.shape, False))
    return a @ b


def expand_scale(scale, shape, is_lhs):
    scale = scale.double().cpu()
    rows, cols = shape
    if scale.dim() == 0 or scale.numel() == 1:
        return scale.reshape(())
    if scale.dim() == 1:
        return scale[:, None] if is_lhs else scale[None, :]
    return scale.repeat_interleave(rows // scale.shape[0], 0).repeat_interleave(cols // scale.shape[1], 1)


def test_version_and_build_flags():
    assert fp8dot.__version__.count(".") == 2
    assert isinstance(fp8dot.cuda_built, bool)
    assert fp8dot.resolve_backend("cpu") == "cpu-emulation"
    assert fp8dot.resolve_backend("auto") in ("cuda", "cpu-emulation")


@pytest.mark.parametrize("precision,algorithm,expected", [
    (("default", "default"), None, "fp8-fast"),
    (("default", "highest"), None, "fp8-promoted"),
    (("high", "default"), None, "fp8-promoted"),
    (("highest", "highest"), None, "fp8-promoted"),
    (("highest", "highest"), "ANY_F8_ANY_F8_F32_FAST_ACCUM", "fp8-fast"),
    (("default", "default"), "ALG_DOT_ANY_F8_ANY_F8_F32", "fp8-promoted"),
])
def test_resolve_accumulation_is_xlas_rule(precision, algorithm, expected):
    for lhs, rhs in [(E4M3, E4M3), ("float8_e5m2", "float8_e4m3fn"), (ml_dtypes.float8_e4m3fn, E5M2)]:
        assert fp8dot.resolve_accumulation(lhs, rhs, precision, algorithm) == expected


def test_resolve_accumulation_errors_name_the_problem():
    with pytest.raises(ValueError, match="algorithm"):
        fp8dot.resolve_accumulation("bfloat16", "bfloat16", "default", "ANY_F8_ANY_F8_F32")
    with pytest.raises(ValueError, match="precision"):
        fp8dot.resolve_accumulation(E4M3, E4M3, ("fastest", "default"))
    with pytest.raises(ValueError, match="dtype int8 is not supported"):
        fp8dot.resolve_accumulation("int8", E4M3)


@pytest.mark.parametrize("precision", ["default", "highest"])
def test_numpy_arrays_match_the_exact_product(precision):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 512)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((512, 48)).astype(ml_dtypes.float8_e5m2)
    d = fp8dot.scaled_dot(a, b, precision=precision)
    assert isinstance(d, np.ndarray) and d.dtype == np.float32 and d.shape == (64, 48)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    accumulation = fp8dot.resolve_accumulation(a.dtype, b.dtype, precision)
    error = np.linalg.norm(d - exact) / np.linalg.norm(exact)
    assert error <= accumulation_tolerance(accumulation, 512) + output_rounding(torch.float32)
    assert error > 0 or accumulation == "fp8-promoted"  # fast accumulation loses bits at K=512


def _scales(*shape, seed):
    """Scales in [0.5, 1.5) from their own seed: a test's data never depends on test order."""
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) + 0.5


SCALE_CASES = {
    "tensor": (lambda m, n, k: torch.tensor(0.5), lambda m, n, k: torch.tensor([3.0])),
    "outer": (lambda m, n, k: _scales(m, seed=31), lambda m, n, k: _scales(n, seed=32)),
    "1x128 x 128x128": (lambda m, n, k: _scales(m, k // 128, seed=33),
                        lambda m, n, k: _scales(k // 128, n // 128, seed=34)),
    "1x128 x 1x128": (lambda m, n, k: _scales(m, k // 128, seed=35),
                      lambda m, n, k: _scales(k // 128, n, seed=36)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scales", list(SCALE_CASES))
@pytest.mark.parametrize("rhs_layout", ["row-major", "column-major"])
def test_scale_modes_and_layouts(device, scales, rhs_layout):
    m, n, k = 256, 256, 512
    lhs = random_fp8((m, k), seed=2, device=device)
    rhs = random_fp8((k, n), seed=3, device=device)
    if rhs_layout == "column-major":
        rhs = rhs.t().contiguous().t()
    lhs_scale, rhs_scale = (make(m, n, k).to(device) for make in SCALE_CASES[scales])
    precision = "highest" if "128" in scales else "default"
    d = fp8dot.scaled_dot(lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale,
                          out_dtype=torch.bfloat16, precision=precision)
    assert d.dtype == torch.bfloat16 and d.device.type == device and d.shape == (m, n)
    exact = exact_product(lhs, rhs, lhs_scale, rhs_scale)
    accumulation = fp8dot.resolve_accumulation(E4M3, E4M3, precision)
    assert relative_frobenius(d, exact) <= (accumulation_tolerance(accumulation, k)
                                            + output_rounding(torch.bfloat16))


@pytest.mark.parametrize("device", DEVICES)
def test_bias_fp8_output_scale_and_amax(device):
    m, n, k = 128, 64, 256
    lhs, rhs = random_fp8((m, k), seed=4, device=device), random_fp8((k, n), seed=5, device=device)
    bias = torch.randn(n, generator=torch.Generator().manual_seed(6)).to(torch.bfloat16).to(device)
    exact = exact_product(lhs, rhs) + bias.double().cpu()
    true_amax = exact.abs().max().item()
    out_scale = torch.tensor(400.0 / true_amax, device=device)
    d, amax = fp8dot.scaled_dot(lhs, rhs, bias=bias, out_dtype=E4M3, out_scale=out_scale,
                                amax=True, precision="highest")
    assert d.dtype == E4M3
    assert float(amax) == pytest.approx(true_amax, rel=accumulation_tolerance("fp8-promoted", k) + 2 ** -8)
    # Each output is exact·out_scale rounded to e4m3 (u = 2^-4), relative to the largest value.
    assert relative_frobenius(d.double().cpu() / out_scale.item(), exact) <= 2 ** -4 + accumulation_tolerance("fp8-promoted", k)


def test_batched_dot_general_with_dimension_numbers():
    lhs = random_fp8((3, 32, 256), seed=7)                 # [B, M, K]
    rhs = random_fp8((256, 3, 16), seed=8)                 # [K, B, N]
    d = fp8dot.scaled_dot(lhs, rhs, dimension_numbers=(((2,), (0,)), ((0,), (1,))),
                          precision="highest")
    assert d.shape == (3, 32, 16)
    exact = torch.einsum("bmk,kbn->bmn", lhs.double(), rhs.double())
    assert relative_frobenius(d, exact) <= accumulation_tolerance("fp8-promoted", 256) + 2 ** -23


def test_cpu_backends_can_be_chosen():
    lhs, rhs = random_fp8((32, 256), seed=9), random_fp8((256, 32), seed=10)
    exact = exact_product(lhs, rhs)
    reference = fp8dot.scaled_dot(lhs, rhs, backend="cpu-reference")
    assert relative_frobenius(reference, exact) <= output_rounding(torch.float32)
    blas = fp8dot.scaled_dot(lhs, rhs, backend="cpu-blas")
    assert relative_frobenius(blas, exact) <= accumulation_tolerance("f32", 256)
    fast = fp8dot.scaled_dot(lhs, rhs, backend="cpu", precision="default")
    assert relative_frobenius(fast, exact) > relative_frobenius(blas, exact)  # fast is lossy


def test_explain_names_accumulation_scales_and_backend():
    lhs, rhs = random_fp8((128, 256), seed=11), random_fp8((256, 128), seed=12)
    text = fp8dot.explain(lhs, rhs, lhs_scale=torch.ones(128, 2), rhs_scale=torch.ones(2, 1),
                          precision="highest")
    assert "fp8-promoted accumulation" in text and "1x128 x 128x128" in text
    assert "backend cpu-emulation" in text


BAD_CALLS = [
    ("non-contiguous", lambda a, b: fp8dot.scaled_dot(a, b[:, ::2]), ValueError, "not a dense layout"),
    ("contracting sizes", lambda a, b: fp8dot.scaled_dot(a, b[:128]), ValueError, "contracting dim"),
    ("scale shape", lambda a, b: fp8dot.scaled_dot(a, b, lhs_scale=torch.ones(3)), ValueError,
     "fits no scale mode"),
    ("scale dtype", lambda a, b: fp8dot.scaled_dot(a, b, lhs_scale=torch.ones((), dtype=torch.float64)),
     ValueError, "lhs_scale must be float32"),
    ("int dtype", lambda a, b: fp8dot.scaled_dot(a.view(torch.int8), b), ValueError, "int8"),
    ("mixed frameworks", lambda a, b: fp8dot.scaled_dot(a, np.zeros((256, 64), np.float32)),
     TypeError, "both"),
    ("not an array", lambda a, b: fp8dot.scaled_dot([1, 2], b), TypeError, "numpy array or a torch"),
    ("fast with blocks", lambda a, b: fp8dot.scaled_dot(a, b, lhs_scale=torch.ones(64, 2),
                                                        rhs_scale=torch.ones(2, 64)), ValueError,
     "fast accumulation"),
    ("rank", lambda a, b: fp8dot.scaled_dot(a[None, None], b), ValueError, "dimension_numbers"),
    ("backend", lambda a, b: fp8dot.scaled_dot(a, b, backend="tpu"), ValueError, "tpu"),
    ("out dtype", lambda a, b: fp8dot.scaled_dot(a, b, out_dtype="int32"), ValueError, "int32"),
    ("scale mode name", lambda a, b: fp8dot.scaled_dot(a, b, lhs_scale=torch.ones(()),
                                                       lhs_scale_mode="2x2"), ValueError, "2x2"),
    ("engine name", lambda a, b: fp8dot.scaled_dot(a, b, engine="tensorrt"), ValueError,
     "tensorrt"),
    ("engine on the CPU", lambda a, b: fp8dot.scaled_dot(a, b, engine="own", backend="cpu"),
     ValueError, "engine 'own' is one of the CUDA backend's GEMM engines"),
    ("explain engine on the CPU", lambda a, b: fp8dot.explain(a, b, engine="cublaslt"),
     ValueError, "runs on the CPU"),
]


@pytest.mark.parametrize("name,call,error,message", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_input_is_a_clear_exception(name, call, error, message):
    a, b = random_fp8((64, 256), seed=13), random_fp8((256, 64), seed=14)
    with pytest.raises(error, match=message):
        call(a, b)


def test_inputs_are_read_in_place_not_copied():
    """A view of the caller's memory: changing the input between calls changes the result."""
    a = np.ones((16, 128), dtype=ml_dtypes.float8_e4m3fn)
    b = np.ones((128, 16), dtype=ml_dtypes.float8_e4m3fn)
    assert fp8dot.scaled_dot(a, b, backend="cpu-reference")[0, 0] == 128
    a[0, :] = 2
    assert fp8dot.scaled_dot(a, b, backend="cpu-reference")[0, 0] == 256


@gpu
@pytest.mark.parametrize("engine", ["own", "cublaslt"])
def test_engine_can_be_forced_and_explain_names_it(engine):
    """A 1x128 x 128x128 dot at 64x2112x7168 (DeepSeek-V3's partial N) on each engine: explain
    names the engine asked for, and the result is within the promoted accumulation's bound of
    the exact product."""
    m, n, k = 64, 2112, 7168
    lhs = random_fp8((m, k), seed=31, device="cuda")
    rhs = random_fp8((n, k), seed=32, device="cuda").t()
    generator = torch.Generator().manual_seed(33)
    lhs_scale = (torch.rand(m, k // 128, generator=generator) + 0.5).cuda()
    rhs_scale = (torch.rand(k // 128, -(-n // 128), generator=generator) + 0.5).cuda()
    options = dict(lhs_scale=lhs_scale, rhs_scale=rhs_scale, out_dtype=torch.bfloat16,
                   precision="highest", engine=engine)
    text = fp8dot.explain(lhs, rhs, **options)
    assert ("fp8dot block-scaled" if engine == "own" else "cuBLASLt") in text, text
    d = fp8dot.scaled_dot(lhs, rhs, **options)
    rhs_scale_full = rhs_scale.repeat_interleave(128, 1)[:, :n]
    exact = (lhs.double().cpu() * lhs_scale.double().cpu().repeat_interleave(128, 1)) @ (
        rhs.double().cpu() * rhs_scale_full.double().cpu().repeat_interleave(128, 0))
    assert relative_frobenius(d, exact) <= (accumulation_tolerance("fp8-promoted", k)
                                            + output_rounding(torch.bfloat16))


# ---- torch.ops.fp8dot.scaled_mm: a C++ kernel where the package was built with torch ------------

def test_torch_ops_are_native_where_the_build_had_torch():
    """FP8DOT_EXPECT_NATIVE_TORCH_OPS=1 (set by the CMake test when it built _torch_ops) turns a
    silent fallback to the Python op into a failure."""
    from fp8dot.torch import ops

    if os.environ.get("FP8DOT_EXPECT_NATIVE_TORCH_OPS") != "1":
        pytest.skip(f"this build does not promise the C++ torch ops (NATIVE is {ops.NATIVE})")
    assert ops.NATIVE


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scales", ["tensor", "outer", "1x128 x 128x128"])
def test_scaled_mm_op_is_scaled_dot_bit_for_bit(device, scales):
    """The op and fp8dot.scaled_dot make one DotSpec and run it on the same backend, so their
    outputs and amax are identical; both are within the resolved accumulation's bound of the
    exact product, so agreeing cannot hide a wrong answer."""
    m, n, k = 256, 128, 512
    lhs = random_fp8((m, k), seed=21, device=device)
    rhs = random_fp8((n, k), seed=22, device=device).t()  # a weight's transpose view
    lhs_scale, rhs_scale = (make(m, n, k).to(device) for make in SCALE_CASES[scales])
    bias = torch.randn(n, generator=torch.Generator().manual_seed(23)).to(torch.bfloat16)
    bias = bias.to(device)
    out, amax = torch.ops.fp8dot.scaled_mm(lhs, rhs, lhs_scale, rhs_scale, bias, None,
                                           torch.bfloat16, "default", "highest", True, "auto")
    expected, expected_amax = fp8dot.scaled_dot(
        lhs, rhs, lhs_scale=lhs_scale, rhs_scale=rhs_scale, bias=bias, out_dtype=torch.bfloat16,
        precision=("default", "highest"), amax=True)
    assert out.device.type == device and amax.device.type == device and amax.shape == ()
    assert torch.equal(out, expected)
    assert float(amax) == float(expected_amax)
    exact = exact_product(lhs, rhs, lhs_scale, rhs_scale) + bias.double().cpu()
    accumulation = fp8dot.resolve_accumulation(E4M3, E4M3, ("default", "highest"))
    assert relative_frobenius(out, exact) <= (accumulation_tolerance(accumulation, k)
                                              + output_rounding(torch.bfloat16))


@pytest.mark.parametrize("device", DEVICES)
def test_scaled_mm_op_fp8_output_with_out_scale_and_no_amax(device):
    m, n, k = 128, 64, 256
    lhs, rhs = random_fp8((m, k), seed=24, device=device), random_fp8((k, n), seed=25, device=device)
    out_scale = torch.tensor(0.25, device=device)
    out, amax = torch.ops.fp8dot.scaled_mm(lhs, rhs, None, None, None, out_scale, E4M3,
                                           "highest", "highest", False, "auto")
    assert out.dtype == E4M3 and out.shape == (m, n) and amax.shape == (0,)
    expected = fp8dot.scaled_dot(lhs, rhs, out_dtype=E4M3, out_scale=out_scale,
                                 precision="highest")
    assert torch.equal(out.view(torch.uint8), expected.view(torch.uint8))


def _op(lhs, rhs, *, lhs_scale=None, out_scale=None, out_dtype=torch.bfloat16,
        precision="default", backend="auto"):
    return torch.ops.fp8dot.scaled_mm(lhs, rhs, lhs_scale, None, None, out_scale, out_dtype,
                                      precision, precision, False, backend)


BAD_OP_CALLS = [
    ("k mismatch", lambda a, b: _op(a, b[:128].contiguous()), "contracting dim"),
    ("non-dense", lambda a, b: _op(a, b[:, ::2]), "not a dense layout"),
    ("lhs dtype", lambda a, b: _op(a.view(torch.int8), b), "int8"),
    ("out dtype", lambda a, b: _op(a, b, out_dtype=torch.int32), "int32"),
    ("precision", lambda a, b: _op(a, b, precision="bogus"), "bogus"),
    ("backend", lambda a, b: _op(a, b, backend="tpu"), "tpu"),
    ("out scale", lambda a, b: _op(a, b, out_scale=torch.ones(2)), "out_scale"),
    ("scale dtype", lambda a, b: _op(a, b, lhs_scale=torch.ones((), dtype=torch.float16)),
     "lhs_scale"),
    # Each after a good call of the same signature, whose cached spec must not skip the check.
    ("freed storage", lambda a, b: (_op(a, b), _op(a, _freed(b))), "rhs: its storage holds 0 "
     "bytes but its shape, strides and offset reach 16384 bytes"),
    ("freed view", lambda a, b: (_op(a, b), _op(a, _freed_view(b))), "rhs: its storage holds 0 "
     "bytes but its shape, strides and offset reach 32768 bytes"),
    ("freed scale", lambda a, b: (_op(a, b, lhs_scale=torch.ones(())),
                                  _op(a, b, lhs_scale=_freed(torch.ones(())))),
     "lhs_scale: its storage holds 0 bytes"),
    ("freed out_scale", lambda a, b: (_op(a, b, out_scale=torch.ones(()), out_dtype=E4M3),
                                      _op(a, b, out_scale=_freed(torch.ones(())),
                                          out_dtype=E4M3)),
     "out_scale: its storage holds 0 bytes"),
]


def _freed(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of `tensor` whose storage then shrank to 0 bytes, as FSDP2 frees a gathered
    parameter between its passes: the tensor keeps its shape."""
    tensor = tensor.clone()
    tensor.untyped_storage().resize_(0)
    return tensor


def _freed_view(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor`'s values as a view at an offset into a larger buffer (as FSDP2's parameters are
    views into one flat buffer), whose storage then shrank to 0 bytes."""
    flat = torch.cat([tensor.reshape(-1), tensor.reshape(-1)])
    view = flat[tensor.numel():].view(tensor.shape)
    flat.untyped_storage().resize_(0)
    return view


@pytest.mark.parametrize("name,call,message", BAD_OP_CALLS, ids=[c[0] for c in BAD_OP_CALLS])
def test_scaled_mm_op_bad_input_is_a_clear_exception(name, call, message):
    """The C++ op raises RuntimeError, as torch's own operators do; the Python definition
    ValueError; both with the library's message."""
    a, b = random_fp8((64, 256), seed=26), random_fp8((256, 64), seed=27)
    with pytest.raises((ValueError, RuntimeError), match=message):
        call(a, b)


@gpu
def test_scaled_mm_op_refuses_tensors_on_two_devices():
    a, b = random_fp8((64, 256), seed=28, device="cuda"), random_fp8((256, 64), seed=29)
    with pytest.raises((ValueError, RuntimeError), match="device"):
        _op(a, b)
