"""fp8dot.quantize and torch.ops.fp8dot.quantize: the rule against a numpy oracle written from its
definition, both orientations, every granularity and partial blocks, the op's fake kernel and
torch.compile, bad input, and (on the GPU) the fused kernel equal to the CPU bytes."""

import numpy as np
import pytest
import torch

import fp8dot
import fp8dot.torch as ft
from conftest import DEVICES, gpu

ml_dtypes = pytest.importorskip("ml_dtypes")

GRANULARITIES = ("tensor", "row", "1x128", "128x128")
FP8 = {"float8_e4m3fn": (torch.float8_e4m3fn, 448.0), "float8_e5m2": (torch.float8_e5m2, 57344.0)}


def group_extents(granularity, rows, cols):
    return {"tensor": (rows, cols), "row": (1, cols), "1x128": (1, 128),
            "128x128": (128, 128)}[granularity]


def oracle(x32: np.ndarray, dtype: str, granularity: str, margin: int = 0):
    """(q as float32 values, scale array) from the definition: amax per group, scale =
    amax·2^margin/max in float32 (1 where amax is not > 0), q = RNE(x · (1/scale)) saturated."""
    rows, cols = x32.shape
    group_rows, group_cols = group_extents(granularity, rows, cols)
    row_groups, col_groups = -(-rows // group_rows), -(-cols // group_cols)
    type_max = np.float32(FP8[dtype][1])
    scales = np.empty((row_groups, col_groups), np.float32)
    q = np.empty_like(x32)
    for gr in range(row_groups):
        for gc in range(col_groups):
            block = x32[gr * group_rows:(gr + 1) * group_rows, gc * group_cols:(gc + 1) * group_cols]
            amax = np.float32(np.nan) if np.isnan(block).any() else np.abs(block).max()
            scale = np.float32(amax * np.float32(2.0 ** margin)) / type_max
            scale = np.float32(scale) if amax > 0 else np.float32(1.0)
            scales[gr, gc] = scale
            inverse = np.float32(1.0) / scale
            scaled = np.clip(block * inverse, -type_max, type_max).astype(np.float32)
            q[gr * group_rows:(gr + 1) * group_rows, gc * group_cols:(gc + 1) * group_cols] = \
                scaled.astype(getattr(ml_dtypes, dtype)).astype(np.float32)
    if granularity == "tensor":
        return q, scales.reshape(())
    return q, scales.reshape(rows) if granularity == "row" else scales


def random_matrix(rows, cols, seed, dtype="float32"):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * np.exp2(rng.integers(-6, 7, (rows, cols))))
    return x.astype(np.float32).astype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype)


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("dtype", list(FP8))
@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16", "float16"])
def test_numpy_quantize_matches_the_definition_in_both_orientations(granularity, dtype,
                                                                    input_dtype):
    x = random_matrix(131, 200, seed=len(granularity) + len(dtype), dtype=input_dtype)
    x32 = x.astype(np.float32)
    result = fp8dot.quantize(x, dtype, granularity, transposed=True, margin=1, amax=True)
    q, scale = oracle(x32, dtype, granularity, margin=1)
    np.testing.assert_array_equal(result.q.astype(np.float32), q)
    np.testing.assert_array_equal(result.scale, scale)
    assert result.amax == np.abs(x32).max()
    # qᵀ: the quantised transpose, with the scales of its own contracting dim.
    q_t, scale_t = oracle(np.ascontiguousarray(x32.T), dtype, granularity, margin=1)
    np.testing.assert_array_equal(result.q_t.astype(np.float32), q_t)
    np.testing.assert_array_equal(np.asarray(result.scale_t), scale_t)
    if granularity in ("tensor", "128x128"):  # shared scales: qᵀ is q transposed
        np.testing.assert_array_equal(result.q_t.astype(np.float32), q.T)


def test_given_scale_saturates_and_reports_amax():
    x = np.array([[1e6, -np.inf, 3.0, -0.5]], np.float32)
    result = fp8dot.quantize(x, "float8_e5m2", scale=np.float32(0.5), amax=True)
    np.testing.assert_array_equal(result.q.astype(np.float32), [[57344, -57344, 6, -1]])
    assert result.scale == np.float32(0.5) and np.isinf(result.amax)


def test_transposed_only_and_an_all_zero_group():
    x = np.zeros((4, 256), np.float32)
    x[:, :128] = 2.0
    result = fp8dot.quantize(x, "float8_e4m3fn", "1x128", row_major=False, transposed=True)
    assert result.q is None and result.q_t.shape == (256, 4)
    np.testing.assert_array_equal(result.scale[:, 1], 1.0)  # zero blocks: scale 1
    np.testing.assert_array_equal(result.scale[:, 0], np.float32(2.0) / np.float32(448))


@pytest.mark.parametrize("row_major, transposed", [(True, True), (True, False), (False, True)])
def test_column_major_block_scales_are_the_same_values_in_the_gemms_layout(row_major,
                                                                          transposed):
    """scale_layout="column-major": the same q bytes and scale values, the scales as
    column-major views (a K-block's rows side by side), numpy and torch alike; a scaled dot
    given them computes the bits it computes with the row-major ones."""
    x = random_matrix(131, 300, seed=5)
    row = fp8dot.quantize(x, "float8_e4m3fn", "1x128", row_major=row_major,
                          transposed=transposed)
    column = fp8dot.quantize(x, "float8_e4m3fn", "1x128", row_major=row_major,
                             transposed=transposed, scale_layout="column-major")
    for name in ("q", "q_t"):
        assert (getattr(row, name) is None) == (getattr(column, name) is None)
        if getattr(row, name) is not None:
            np.testing.assert_array_equal(getattr(column, name).view(np.uint8),
                                          getattr(row, name).view(np.uint8))
    np.testing.assert_array_equal(column.scale, row.scale)
    assert column.scale.shape == (131, 3) and column.scale.strides == (4, 4 * 131)
    if transposed:
        np.testing.assert_array_equal(column.scale_t, row.scale_t)
        assert column.scale_t.shape == (300, 2) and column.scale_t.strides == (4, 4 * 300)
    t = ft.quantize(torch.from_numpy(x), torch.float8_e4m3fn, "1x128", row_major=row_major,
                    transposed=transposed, scale_layout="column-major")
    assert t.scale.stride() == (1, 131) and torch.equal(t.scale, torch.from_numpy(row.scale))
    if transposed:
        assert t.scale_t.stride() == (1, 300)
        assert torch.equal(t.scale_t, torch.from_numpy(np.asarray(row.scale_t)))
    if row_major:
        w = fp8dot.quantize(random_matrix(64, 300, seed=6), "float8_e4m3fn", "128x128")
        products = [fp8dot.scaled_dot(r.q, w.q.T, lhs_scale=r.scale, rhs_scale=w.scale.T,
                                      out_dtype="float32", precision=("highest", "highest"))
                    for r in (row, column)]
        np.testing.assert_array_equal(products[1], products[0])


@pytest.mark.parametrize("granularity", ["tensor", "row", "128x128"])
def test_column_major_scales_are_refused_where_the_scales_have_one_layout(granularity):
    with pytest.raises((ValueError, RuntimeError), match="column-major scales are for 1x128"):
        fp8dot.quantize(np.ones((8, 8), np.float32), "float8_e4m3fn", granularity,
                        scale_layout="column-major")
    with pytest.raises((ValueError, RuntimeError), match="column-major scales are for 1x128"):
        ft.quantize(torch.ones(8, 8), torch.float8_e4m3fn, granularity,
                    scale_layout="column-major")
    with pytest.raises((ValueError, RuntimeError), match="unknown scale layout 'k-major'"):
        fp8dot.quantize(np.ones((8, 8), np.float32), "float8_e4m3fn", "1x128",
                        scale_layout="k-major")


@pytest.mark.parametrize("bad, match", [
    (lambda: fp8dot.quantize(np.ones((2, 3, 4), np.float32), "float8_e4m3fn"), "a matrix"),
    (lambda: fp8dot.quantize(np.ones((8, 8), np.float32).T[:, :4], "float8_e4m3fn"),
     "not row-major|dense"),
    (lambda: fp8dot.quantize(np.ones((8, 8), np.int32), "float8_e4m3fn"), "int32|dtype|type"),
    (lambda: fp8dot.quantize(np.ones((8, 8), np.float32), "bfloat16"), "not an FP8 type"),
    (lambda: fp8dot.quantize(np.ones((8, 8), np.float32), "float8_e4m3fn", "2x128"), "2x128"),
    (lambda: fp8dot.quantize(np.ones((8, 8), np.float32), "float8_e4m3fn", "row",
                             scale=np.float32(1)), "tensor granularity"),
    (lambda: fp8dot.quantize(np.ones((8, 8), np.float32), "float8_e4m3fn",
                             scale=np.ones(2, np.float32)), "one float32"),
    (lambda: fp8dot.quantize(np.ones((0, 8), np.float32), "float8_e4m3fn"), "at least one row"),
    (lambda: fp8dot.quantize(np.ones((8, 8), np.float32), "float8_e4m3fn", row_major=False),
     "neither"),
])
def test_bad_input_is_a_clear_value_error(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad()


# ---- the torch op ------------------------------------------------------------------------------

OP_LAYOUTS = [(g, "row-major") for g in GRANULARITIES] + [("1x128", "column-major")]


@pytest.mark.parametrize("granularity, scale_layout", OP_LAYOUTS)
@pytest.mark.parametrize("row_major", [True, False], ids=["q-and-q_t", "q_t-only"])
def test_torch_op_passes_opcheck_and_its_fake_shapes_are_the_real_ones(granularity, scale_layout,
                                                                       row_major):
    """Also for the outputs a call does not produce (empty tensors of the fake's dtypes), and
    the strides of column-major scales."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    x = torch.randn(200, 136, dtype=torch.bfloat16)
    args = (x, torch.float8_e4m3fn, granularity, row_major, True, None, 0, row_major,
            scale_layout)
    torch.library.opcheck(torch.ops.fp8dot.quantize.default, args,
                          test_utils=("test_faketensor", "test_autograd_registration",
                                      "test_aot_dispatch_dynamic"))
    real = torch.ops.fp8dot.quantize(*args)
    with FakeTensorMode() as mode:
        fake = torch.ops.fp8dot.quantize(mode.from_tensor(x), *args[1:])
    assert [tuple(t.shape) for t in fake] == [tuple(t.shape) for t in real]
    assert [t.dtype for t in fake] == [t.dtype for t in real]
    assert [t.stride() for t in fake] == [t.stride() for t in real]


BAD_OP_CALLS = [
    ("granularity", lambda x: (x, torch.float8_e4m3fn, "2x128", True, False, None, 0, False),
     "2x128"),
    ("input dtype", lambda x: (x.to(torch.int32), torch.float8_e4m3fn, "tensor", True, False,
                               None, 0, False), "int32"),
    ("output dtype", lambda x: (x, torch.bfloat16, "tensor", True, False, None, 0, False),
     "not an FP8 type"),
    ("rank", lambda x: (x[None], torch.float8_e4m3fn, "tensor", True, False, None, 0, False),
     "matrix"),
    ("given scale", lambda x: (x, torch.float8_e4m3fn, "tensor", True, False, torch.ones(2), 0,
                               False), "one float32"),
    ("nothing asked", lambda x: (x, torch.float8_e4m3fn, "tensor", False, False, None, 0,
                                 False), "neither"),
    ("freed input", lambda x: (_freed(x), torch.float8_e4m3fn, "tensor", True, False, None, 0,
                               False), "input: its storage holds 0 bytes but its shape, strides "
     "and offset reach 2048 bytes"),
    ("freed scale", lambda x: (x, torch.float8_e4m3fn, "tensor", True, False,
                               _freed(torch.ones(1)), 0, False), "scale: its storage holds 0"),
]


def _freed(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of `tensor` whose storage then shrank to 0 bytes (as FSDP2 frees a gathered
    parameter between its passes); the tensor keeps its shape."""
    tensor = tensor.clone()
    tensor.untyped_storage().resize_(0)
    return tensor


@pytest.mark.parametrize("name,args,match", BAD_OP_CALLS, ids=[c[0] for c in BAD_OP_CALLS])
def test_torch_op_bad_input_is_a_clear_exception(name, args, match):
    """The C++ op raises RuntimeError, as torch's operators do; the Python definition
    ValueError; both with the library's message."""
    with pytest.raises((ValueError, RuntimeError), match=match):
        torch.ops.fp8dot.quantize(*args(torch.randn(16, 32)))


def test_torch_op_checks_the_storage_on_every_call():
    """A call whose signature was seen before reuses its checked spec, not its storage check."""
    x = torch.randn(24, 40)
    torch.ops.fp8dot.quantize(x, torch.float8_e4m3fn, "tensor", True, False, None, 0, False)
    flat = torch.cat([x.reshape(-1), x.reshape(-1)])
    view = flat[x.numel():].view(x.shape)  # as FSDP2's parameters view one flat buffer
    flat.untyped_storage().resize_(0)
    with pytest.raises((ValueError, RuntimeError), match="input: its storage holds 0 bytes but "
                                                         "its shape, strides and offset reach "
                                                         "7680 bytes"):
        torch.ops.fp8dot.quantize(view, torch.float8_e4m3fn, "tensor", True, False, None, 0,
                                  False)


def test_torch_quantize_equals_numpy_and_compiles_without_graph_breaks():
    x = torch.randn(256, 384, generator=torch.Generator().manual_seed(3))
    expected = fp8dot.quantize(x.numpy(), "float8_e4m3fn", "1x128", transposed=True)
    result = ft.quantize(x, torch.float8_e4m3fn, "1x128", transposed=True)
    np.testing.assert_array_equal(result.q.float().numpy(), expected.q.astype(np.float32))
    np.testing.assert_array_equal(result.q_t.float().numpy(), expected.q_t.astype(np.float32))
    np.testing.assert_array_equal(result.scale_t.numpy(), expected.scale_t)

    @torch.compile(fullgraph=True, backend="aot_eager")
    def step(x):
        r = ft.quantize(x, torch.float8_e5m2, "128x128", transposed=True)
        return r.q.float() * 2, r.q_t, r.scale_t

    q2, q_t, scale_t = step(x)
    eager = ft.quantize(x, torch.float8_e5m2, "128x128", transposed=True)
    assert torch.equal(q2, eager.q.float() * 2) and torch.equal(q_t.float(), eager.q_t.float())
    assert torch.equal(scale_t, eager.scale.t())


def test_torch_wrappers_keep_their_shapes():
    x = torch.randn(256, 128)
    q, scale = ft.quantize_rowwise(x, torch.float8_e4m3fn, reduce_dim=0)
    assert q.shape == (256, 128) and q.is_contiguous() and scale.shape == (128,)
    expected = x.abs().amax(0) / 448
    torch.testing.assert_close(scale, expected, rtol=0, atol=0)
    q, scale = ft.quantize_blocks(x, torch.float8_e4m3fn, 128, 128)
    assert scale.shape == (2, 1)
    with pytest.raises(ValueError, match="1x128 or 128x128"):
        ft.quantize_blocks(x, torch.float8_e4m3fn, 64, 64)


# ---- the GPU kernel ----------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("granularity, scale_layout", OP_LAYOUTS)
@pytest.mark.parametrize("input_dtype", [torch.bfloat16, torch.float32])
def test_cuda_kernel_gives_the_cpu_bytes(granularity, scale_layout, input_dtype):
    for seed, (rows, cols) in enumerate([(512, 384), (200, 136), (129, 7)]):
        x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed)) * 30
        x = x.to(input_dtype)
        cpu = ft.quantize(x, torch.float8_e5m2, granularity, transposed=True, amax=True,
                          scale_layout=scale_layout)
        gpu_result = ft.quantize(x.cuda(), torch.float8_e5m2, granularity, transposed=True,
                                 amax=True, scale_layout=scale_layout)
        for name in ("q", "q_t"):
            assert torch.equal(getattr(gpu_result, name).cpu().view(torch.uint8),
                               getattr(cpu, name).view(torch.uint8)), (name, rows, cols)
        for name in ("scale", "scale_t", "amax"):
            assert torch.equal(getattr(gpu_result, name).cpu(), getattr(cpu, name)), name
            assert getattr(gpu_result, name).stride() == getattr(cpu, name).stride(), name


@gpu
@pytest.mark.parametrize("input_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("shape", [(4096, 2048), (1000, 37)])  # several loads per thread; scalar
def test_cuda_tensor_amax_sees_every_element(input_dtype, shape):
    """The tensor amax pass streams the tensor from its end (so the cast finds its start in L2):
    a spike at the first, a middle or the last element is the amax, and the scale is the CPU's."""
    count = shape[0] * shape[1]
    for position in (0, count // 2 + 3, count - 1):
        x = torch.randn(shape, generator=torch.Generator().manual_seed(position)).to(input_dtype)
        x.view(-1)[position] = -8192.0
        result = ft.quantize(x.cuda(), torch.float8_e4m3fn, amax=True)
        assert result.amax.item() == 8192.0, position
        assert torch.equal(result.scale.cpu(), ft.quantize(x, torch.float8_e4m3fn).scale)


@gpu
def test_cuda_given_scale_on_the_host_is_refused_after_a_cached_call():
    x = torch.randn(256, 256, device="cuda")
    ft.quantize(x, torch.float8_e4m3fn, scale=torch.tensor(0.5, device="cuda"))
    with pytest.raises((ValueError, RuntimeError), match="scale is on"):
        ft.quantize(x, torch.float8_e4m3fn, scale=torch.tensor(0.5))


@gpu
def test_cuda_quantize_is_captured_in_a_cuda_graph():
    x = torch.randn(1024, 512, device="cuda", dtype=torch.bfloat16)
    ft.quantize(x, torch.float8_e4m3fn, transposed=True)  # the first call validates and caches
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = ft.quantize(x, torch.float8_e4m3fn, transposed=True)
    x.copy_(torch.randn_like(x) * 7)
    graph.replay()
    expected = ft.quantize(x, torch.float8_e4m3fn, transposed=True)
    assert torch.equal(captured.q.view(torch.uint8), expected.q.view(torch.uint8))
    assert torch.equal(captured.q_t.view(torch.uint8), expected.q_t.view(torch.uint8))
    assert torch.equal(captured.scale, expected.scale)


# ---- the SwiGLU product, quantised on the way in (up=) ------------------------------------------

E4M3 = torch.float8_e4m3fn

def _swiglu_product_bf16(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """SiLU(gate) · up in float64, rounded once to bfloat16: what the rule approximates (within
    3 float32 ulps before its own rounding to bfloat16)."""
    g, u = gate.double(), up.double()
    return (g / (1 + torch.exp(-g)) * u).to(torch.bfloat16)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("granularity", ["tensor", "row", "1x128", "128x128"])
def test_swiglu_quantises_the_product_its_framework_would_store(device, granularity):
    gate = (torch.randn(131, 200, generator=torch.Generator().manual_seed(5)) * 3).bfloat16()
    up = torch.randn(131, 200, generator=torch.Generator().manual_seed(6)).bfloat16()
    gate, up = gate.to(device), up.to(device)
    product = _swiglu_product_bf16(gate, up)
    fused = ft.quantize(gate, E4M3, granularity, transposed=True, amax=True, up=up)
    plain = ft.quantize(product, E4M3, granularity, transposed=True, amax=True)
    # The rule's float32 product is within 3 ulps of the exact one, so its rounding to bfloat16
    # can differ from the exact product's only next to a rounding boundary: rarely, by one step.
    differ = (fused.q.float() != plain.q.float()).float().mean().item()
    assert differ < 1e-3
    assert fused.amax.item() == pytest.approx(plain.amax.item(), rel=2 ** -7)
    assert float(fused.amax) > 1.0  # a real product, not zeros
    if granularity in ("tensor", "128x128"):  # q_t is q transposed: the same scales
        assert torch.equal(fused.q_t.t().float(), fused.q.float())
    # Never the gate itself.
    assert not torch.equal(fused.q.float(), ft.quantize(gate, E4M3, granularity).q.float())


def test_swiglu_through_numpy_equals_torch():
    gate = torch.randn(64, 256, generator=torch.Generator().manual_seed(7)) * 2
    up = torch.randn(64, 256, generator=torch.Generator().manual_seed(8))
    ours = fp8dot.quantize(gate.numpy(), "float8_e4m3fn", "1x128", up=up.numpy())
    theirs = ft.quantize(gate, E4M3, "1x128", up=up)
    assert np.array_equal(ours.q.view(np.uint8), theirs.q.view(torch.uint8).numpy())
    assert np.array_equal(ours.scale, theirs.scale.numpy())


def test_swiglu_op_passes_opcheck_and_refuses_an_up_that_does_not_match():
    gate = torch.randn(200, 136, dtype=torch.bfloat16)
    up = torch.randn(200, 136, dtype=torch.bfloat16)
    args = (gate, E4M3, "1x128", True, True, None, 0, True, "column-major", up)
    torch.library.opcheck(torch.ops.fp8dot.quantize.default, args,
                          test_utils=("test_faketensor", "test_autograd_registration",
                                      "test_aot_dispatch_dynamic"))
    with pytest.raises(RuntimeError, match=r"quantize up: bf16\[200,100\].* does not match the "
                                           r"input \(gate\) bf16\[200,136\]"):
        ft.quantize(gate, E4M3, up=up[:, :100])
    with pytest.raises(RuntimeError, match="does not match the input"):
        ft.quantize(gate, E4M3, up=up.float())


# ---- GELU, quantised on the way in (activation="gelu") ------------------------------------------

def _gelu_bf16(x: torch.Tensor) -> torch.Tensor:
    """GELU's tanh form in float64, rounded once to bfloat16: what the rule approximates (its
    float32 value within a few ulps of it, activation_rule_test)."""
    u = x.double()
    return (0.5 * u * (1 + torch.tanh((2 / torch.pi) ** 0.5 * (u + 0.044715 * u ** 3)))).bfloat16()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("granularity", ["tensor", "row", "1x128", "128x128"])
def test_gelu_quantises_the_activation_its_framework_would_store(device, granularity):
    x = (torch.randn(131, 200, generator=torch.Generator().manual_seed(15)) * 3).bfloat16()
    x = x.to(device)
    fused = ft.quantize(x, E4M3, granularity, transposed=True, amax=True, activation="gelu")
    plain = ft.quantize(_gelu_bf16(x), E4M3, granularity, transposed=True, amax=True)
    # As for SwiGLU: the bfloat16 roundings differ only next to a rounding boundary.
    differ = (fused.q.float() != plain.q.float()).float().mean().item()
    assert differ < 1e-3
    assert fused.amax.item() == pytest.approx(plain.amax.item(), rel=2 ** -7)
    assert float(fused.amax) > 5.0  # x up to ~12: GELU(x) ~ x there
    # torch's own GELU (float32 inside, rounded to bfloat16) quantises to the same bytes but
    # where the two float32 values round to bfloat16 differently.
    theirs = ft.quantize(torch.nn.functional.gelu(x, approximate="tanh"), E4M3, granularity)
    assert (fused.q.float() != theirs.q.float()).float().mean().item() < 1e-2
    assert not torch.equal(fused.q.float(), ft.quantize(x, E4M3, granularity).q.float())


def test_gelu_through_numpy_equals_torch_and_the_op_passes_opcheck():
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(17)) * 2
    ours = fp8dot.quantize(x.numpy(), "float8_e4m3fn", "1x128", activation="gelu")
    theirs = ft.quantize(x, E4M3, "1x128", activation="gelu")
    assert np.array_equal(ours.q.view(np.uint8), theirs.q.view(torch.uint8).numpy())
    assert np.array_equal(ours.scale, theirs.scale.numpy())
    args = (x.bfloat16(), E4M3, "1x128", True, True, None, 0, True, "column-major", None, "gelu")
    torch.library.opcheck(torch.ops.fp8dot.quantize.default, args,
                          test_utils=("test_faketensor", "test_autograd_registration",
                                      "test_aot_dispatch_dynamic"))


def test_activation_names_and_their_inputs_are_checked():
    x = torch.randn(8, 16)
    with pytest.raises(ValueError, match=r"unknown quantize activation 'relu' \(none, swiglu or "
                                         r"gelu\)"):
        fp8dot.quantize(x.numpy(), "float8_e4m3fn", activation="relu")
    with pytest.raises(ValueError, match="the gelu activation takes no up"):
        fp8dot.quantize(x.numpy(), "float8_e4m3fn", activation="gelu", up=x.numpy())
    with pytest.raises(ValueError, match=r"the swiglu activation needs up \(its second input\)"):
        fp8dot.quantize(x.numpy(), "float8_e4m3fn", activation="swiglu")
    with pytest.raises(RuntimeError, match="the gelu activation takes no up"):
        ft.quantize(x, E4M3, activation="gelu", up=x)
