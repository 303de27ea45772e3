"""fp8dot.set_autotune: the process's autotuning of the GPU plans fp8dot makes on the caller's
behalf (torch ops and layers, fp8dot.jax, scaled_dot on device arrays). The setting and its
errors are tested everywhere; that plans are autotuned with it, on the GPU."""

import os
import subprocess
import sys

import pytest
import torch

import fp8dot
import fp8dot.torch.ops as torch_ops
from conftest import gpu
from test_scaled_dot import E4M3, exact_product, random_fp8
from tolerances import accumulation_tolerance, output_rounding, relative_frobenius


@pytest.fixture(autouse=True)
def _restore_the_setting():
    """Each test leaves the process's setting as it found it (FP8DOT_AUTOTUNE's, if set)."""
    saved = fp8dot.autotune_setting()
    yield
    fp8dot.set_autotune(*saved)


def test_the_setting_round_trips_and_reaches_the_cpp_torch_ops():
    fp8dot.set_autotune(0)
    assert fp8dot.autotune_setting() == (0, "")
    fp8dot.set_autotune(8, "/tmp/fp8dot-autotune.txt")
    assert fp8dot.autotune_setting() == (8, "/tmp/fp8dot-autotune.txt")
    if torch_ops.NATIVE:
        assert torch_ops.native_autotune_candidates() == 8
    fp8dot.set_autotune(0)
    assert fp8dot.autotune_setting() == (0, "")
    if torch_ops.NATIVE:
        assert torch_ops.native_autotune_candidates() == 0


@pytest.mark.parametrize("candidates, error, message", [
    (-1, ValueError, "must be >= 0"),
    (True, TypeError, "must be an int"),
    (2.0, TypeError, "must be an int"),
    ("8", TypeError, "must be an int"),
])
def test_bad_candidates_are_refused_and_change_nothing(candidates, error, message):
    fp8dot.set_autotune(3)
    with pytest.raises(error, match=message):
        fp8dot.set_autotune(candidates)
    assert fp8dot.autotune_setting() == (3, "")


def run_python(code, **environment):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **environment}, timeout=120)


def test_the_environment_sets_it_before_the_first_plan():
    run = run_python("import fp8dot, fp8dot.torch; print(fp8dot.autotune_setting())",
                     FP8DOT_AUTOTUNE="6", FP8DOT_AUTOTUNE_CACHE="/tmp/tune.txt")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("(6, '/tmp/tune.txt')"), run.stdout


def test_a_malformed_environment_is_a_clear_error_not_an_import_failure():
    run = run_python("import fp8dot, fp8dot.torch\n"
                     "try:\n    fp8dot.autotune_setting()\n"
                     "except ValueError as e:\n    print('ValueError:', e)",
                     FP8DOT_AUTOTUNE="lots")
    assert run.returncode == 0, run.stderr
    assert "ValueError: FP8DOT_AUTOTUNE='lots' is not a number of candidates" in run.stdout


@gpu
def test_gpu_plans_made_with_the_setting_are_autotuned_and_exact(tmp_path):
    cache = tmp_path / "autotune.txt"
    fp8dot.set_autotune(4, str(cache))
    bound = lambda k: accumulation_tolerance("fp8-promoted", k) + output_rounding(torch.bfloat16)
    m, n, k = 320, 704, 1536  # shapes no other test plans, so the plans are new
    lhs = random_fp8((m, k), seed=41, device="cuda")
    rhs = random_fp8((k, n), seed=42, device="cuda")
    text = fp8dot.explain(lhs, rhs, precision="highest")
    assert "autotuning: " in text, text
    d = fp8dot.scaled_dot(lhs, rhs, out_dtype=torch.bfloat16, precision="highest")
    assert relative_frobenius(d, exact_product(lhs, rhs)) <= bound(k)
    # The torch op on a shape of its own: its library (C++ where built) has its own copy of the
    # setting, so its plan's race adds its winners to the cache file too.
    lines = cache.read_text().splitlines()
    lhs, rhs = lhs[:, :1280], rhs[:1280, :576].contiguous()
    lhs = lhs.contiguous()
    one = torch.ones((), device="cuda")
    d_op, _ = torch.ops.fp8dot.scaled_mm(lhs, rhs, one, one, None, None, torch.bfloat16,
                                         "highest", "highest", False, "auto")
    torch.cuda.synchronize()
    assert relative_frobenius(d_op, exact_product(lhs, rhs)) <= bound(1280)
    assert len(cache.read_text().splitlines()) > len(lines)
    if torch_ops.NATIVE:
        assert torch_ops.native_autotune_candidates() == 4
