"""fp8dot.jax inside shard_map on 2 CPU devices (a subprocess: tests/python/jax_sharded_runs.py):
data parallelism and tensor parallelism (column- then row-parallel) of an FP8 MLP, each held
against the unsharded run on the same batch.

With fp8dot.jax.AmaxReduction the devices cast with the whole tensors' scales, so the FP8
operands are the unsharded run's and the results differ only by where float32 sums meet
(tolerances.accumulation_tolerance's float32 case over the batch). Where the sums that differ
feed a later cast (a row-parallel output's gradient, cast to e5m2), a few elements round the
other way (tolerances.requantisation_tolerance).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("torch")  # tolerances.py's dtypes
pytest.importorskip("fp8dot.jax")

import torch  # noqa: E402  (the tolerances' dtypes)

from tolerances import accumulation_tolerance, requantisation_tolerance  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(__file__), "jax_sharded_runs.py")
REORDERING = accumulation_tolerance("f32", 256)  # the global batch's rows
REQUANTISATION = requantisation_tolerance(REORDERING, torch.float8_e5m2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    path = tmp_path_factory.mktemp("jax_sharded") / "runs.npz"
    done = subprocess.run([sys.executable, SCRIPT, str(path)], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-4000:]
    data = np.load(path)
    return {key: (data[f"{key}|sharded"], data[f"{key}|whole"])
            for key in {name.split("|")[0] for name in data.files}}


def relative(pair) -> float:
    sharded, whole = pair
    return float(np.linalg.norm(sharded - whole) / np.linalg.norm(whole))


@pytest.mark.parametrize("recipe_name", ["tensorwise", "delayed", "blocks"])
def test_data_parallel_gradients_equal_the_unsharded(runs, recipe_name):
    for weight in ("dw1", "dw2"):
        assert relative(runs[f"dp {recipe_name} {weight}"]) <= REORDERING, weight


def test_data_parallel_delayed_state_equals_the_unsharded(runs):
    """Every amax history and scale of both layers, bit for bit: the histories record the
    batch's amaxes (reduced over "data"), and the replicated state's new value is the same on
    every device."""
    states = [key for key in runs if key.startswith("dp delayed state")]
    assert len(states) == 12
    for key in states:
        sharded, whole = runs[key]
        np.testing.assert_array_equal(sharded, whole, err_msg=key)
    assert (runs["dp delayed state0.input_amax_history"][1][0] > 0)


def test_without_the_amax_reduction_devices_cast_with_their_own_scales(runs):
    """The control: the second half of the batch is 4x larger, so each device's own scale
    differs from the batch's, and the gradients by FP8's quantisation error."""
    worst = max(relative(runs[f"dp tensorwise no reduction {w}"]) for w in ("dw1", "dw2"))
    assert 100 * REORDERING < worst < 2.0 ** -3


def test_tensor_parallel_gradients_equal_the_unsharded(runs):
    """Column- then row-parallel, promoted everywhere (the row-parallel sum over K halves then
    differs from the whole K's by float32 reordering alone)."""
    for weight in ("dw1", "dw2"):
        assert relative(runs[f"tp tensorwise promoted {weight}"]) <= REQUANTISATION, weight
        without = relative(runs[f"tp tensorwise promoted no reduction {weight}"])
        assert without > 10 * REQUANTISATION, weight


def test_tensor_parallel_casting_the_transpose_again_is_bit_identical(runs):
    """recompute_weight_transpose on sharded weights: each shard's Wᵀ cast again in the backward
    with the scale reduced over "model" in the forward, the same gradients bit for bit."""
    for weight in ("dw1", "dw2"):
        again, _ = runs[f"tp tensorwise promoted recompute {weight}"]
        kept, _ = runs[f"tp tensorwise promoted {weight}"]
        np.testing.assert_array_equal(again, kept, err_msg=weight)


def test_the_flax_drop_in_data_parallel_equals_the_unsharded(runs):
    """fp8dot.flax.DotGeneral(amax_reduction=...) in nn.Dense (Flax's delayed recipe): the
    kernel's and bias's gradients within float32 reordering, and the delayed state in the
    _overwrite_with_gradient collection bit for bit."""
    entries = {key: pair for key, pair in runs.items() if key.startswith("flax ")}
    if not entries:
        pytest.skip("Flax is not installed")
    states = [key for key in entries if "_overwrite_with_gradient" in key]
    assert len(states) == 6
    for key in states:
        np.testing.assert_array_equal(*entries[key], err_msg=key)
    for name in ("kernel", "bias"):
        key = f"flax ['params']['{name}']"
        assert relative(entries[key]) <= REORDERING, key
