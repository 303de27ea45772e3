"""The training example's JAX/Flax twin (examples/train/train_flax.py) on the CPU: the tiny config
learns with bf16, with Flax's FP8 and with fp8dot's Flax drop-in; the FP8 runs end within e4m3's
unit roundoff of bf16's validation loss; the run record lists the FP8 GEMMs of the jitted step;
the Flax model has gpt.py's parameter counts.

Each run is the real command line in a subprocess, read back from its --log file: about 20 s on
two cores for bf16 and Flax's FP8 (XLA's CPU dots). fp8dot's GEMMs run in the CPU emulation of
the FP8 accumulator, about 5 s a step at the tiny config's 512 tokens, so its run is shorter
(SHORT_RUN, about 40 s) and is compared with a bf16 run of the same length.
"""

from __future__ import annotations

import functools
import math
import sys

import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")
torch = pytest.importorskip("torch")  # corpus.py draws train.py's batches with torch's generator

from train_example_runs import REQUIRED_DROP_NATS, TRAIN_DIR, of_type, run_script  # noqa: E402

# REQUIRED_DROP_NATS holds for JAX as for torch: the tiny run's training loss (last 3 steps'
# mean) fell by 2.34, 2.42 and 2.12 nats with seeds 0, 1, 2 (5.55 -> 3.21, 5.56 -> 3.14,
# 5.56 -> 3.44), validation by 2.34, 2.29, 2.29 (5.55 -> 3.22, 3.26, 3.27); 7.5 s of training
# after 12 s of start-up and compilation.

# fp8dot's run: 12 steps of 2 x 64 tokens, one evaluation on 2 x 2 windows at the end. bf16
# with these flags fell by 1.45, 1.56, 1.38 nats (seeds 0, 1, 2; the last step's loss),
# validation by 1.31, 1.26, 1.37; fp8dot (default recipe, seed 0) by 1.45, validation 5.55 ->
# 4.234 against bf16's 4.236. 1.0 nats leaves 0.26 under the smallest measured drop for other
# machines; a run that does not learn stays near ln 256 = 5.55 whatever its batches (an untrained
# model's loss hardly depends on them), and a partly broken one (a wrong scale or gradient)
# learns far less in 12 steps.
SHORT_RUN = ("--steps", "12", "--batch-size", "2", "--eval-every", "12", "--eval-batches", "2")
SHORT_RUN_REQUIRED_DROP_NATS = 1.0

# The relative rounding error of one e4m3-quantised operand: the loss cannot move more than its
# inputs' relative error without a defect (a wrong scale or transpose moves it by O(1)).
E4M3_UNIT_ROUNDOFF = 2 ** -4

# The Dense layers each block swaps with SwiGLU (the tiny config's MLP): q/k/v, attention out,
# gate, up, down.
SWAPPED_PER_BLOCK = 5


def run_tiny(tmp_path, name: str, *extra: str) -> list[dict]:
    return run_script("train_flax.py", tmp_path, name, *extra)


def assert_learns(records: list[dict], steps: int, required_drop: float) -> None:
    summary = of_type(records, "summary")[0]
    assert summary["diverged_at"] is None
    assert summary["steps"] == steps
    assert [t["step"] for t in of_type(records, "train")] == list(range(1, steps + 1))
    drop = summary["first_train_loss"] - summary["final_train_loss_mean_last_10pct"]
    assert drop > required_drop, f"training loss fell by only {drop:.3f} nats"
    evals = of_type(records, "eval")
    assert evals[0]["step"] == 0 and evals[-1]["step"] == steps
    val_drop = evals[0]["val_loss"] - evals[-1]["val_loss"]
    assert val_drop > required_drop, f"validation loss fell by only {val_drop:.3f} nats"


def assert_within_e4m3_roundoff_of(records: list[dict], bf16_records: list[dict]) -> None:
    fp8_val = of_type(records, "summary")[0]["final_val_loss"]
    bf16_val = of_type(bf16_records, "summary")[0]["final_val_loss"]
    assert math.isfinite(fp8_val) and abs(fp8_val - bf16_val) < E4M3_UNIT_ROUNDOFF * bf16_val


def seed_rule_gemms(run: dict, engine: str) -> dict:
    """The run record's fp8_gemms for the seed's rule: per swapped Dense, the forward GEMM fast
    and the two gradient GEMMs promoted."""
    swapped = SWAPPED_PER_BLOCK * run["layers"]
    return {engine: {"fp8-fast": swapped, "fp8-promoted": 2 * swapped}}


@pytest.fixture(scope="module")
def bf16_run(tmp_path_factory) -> list[dict]:
    return run_tiny(tmp_path_factory.mktemp("jax-bf16"), "bf16", "--linear", "bf16")


@pytest.fixture(scope="module")
def bf16_short_run(tmp_path_factory) -> list[dict]:
    return run_tiny(tmp_path_factory.mktemp("jax-bf16-short"), "bf16-short", "--linear", "bf16",
                    *SHORT_RUN)


@pytest.fixture(scope="module")
def train_modules():
    """examples/train on sys.path, for the tests that import its modules."""
    sys.path.insert(0, str(TRAIN_DIR))
    yield
    sys.path.remove(str(TRAIN_DIR))


def test_tiny_bf16_loss_falls(bf16_run):
    assert_learns(bf16_run, 30, REQUIRED_DROP_NATS)
    run = of_type(bf16_run, "run")[0]
    assert run["framework"] == "jax" and run["linear"] == "bf16" and run["fp8_gemms"] is None
    assert len(run["corpus_sha256"]) == 64 and run["corpus_train_bytes"] > 1_000_000
    # gpt.py's counts for the tiny config (examples/train/README.md).
    assert run["parameters"]["total"] == 168_256
    assert run["parameters"]["block_projections"] == 131_072
    assert all(t["tokens_per_s"] > 0 and t["lr"] > 0 for t in of_type(bf16_run, "train"))


def test_tiny_flax_fp8_learns_like_bf16_with_xlas_fp8_gemms(bf16_run, tmp_path):
    records = run_tiny(tmp_path, "flax-fp8", "--linear", "flax-fp8")
    assert_learns(records, 30, REQUIRED_DROP_NATS)
    assert_within_e4m3_roundoff_of(records, bf16_run)
    run = of_type(records, "run")[0]
    assert run["fp8_gemms"] == seed_rule_gemms(run, "xla")


def test_tiny_fp8dot_default_recipe_learns_like_bf16(bf16_short_run, tmp_path):
    pytest.importorskip("fp8dot.flax")
    records = run_tiny(tmp_path, "fp8dot", "--linear", "fp8dot", *SHORT_RUN)
    assert_learns(records, 12, SHORT_RUN_REQUIRED_DROP_NATS)
    assert_learns(bf16_short_run, 12, SHORT_RUN_REQUIRED_DROP_NATS)
    assert_within_e4m3_roundoff_of(records, bf16_short_run)
    run = of_type(records, "run")[0]
    assert run["recipe"] is None and "scaling=delayed" in run["linear_description"]
    assert run["fp8_gemms"] == seed_rule_gemms(run, "fp8dot")


def test_recompute_weight_transpose_is_the_same_run_bit_for_bit(tmp_path, train_modules,
                                                               capsys):
    """--recompute-weight-transpose: fp8dot.flax's Dense layers cast the kernel's dgrad operand
    again in the backward, and the 5 steps' losses are those of keeping it."""
    pytest.importorskip("fp8dot.flax")
    import train_flax

    with pytest.raises(SystemExit):  # bf16 and Flax's own FP8 layers have no such option
        train_flax.parse_args(["--linear", "flax-fp8", "--recompute-weight-transpose"])
    assert "applies to --linear fp8dot only" in capsys.readouterr().err
    steps = ("--steps", "5", "--batch-size", "2", "--eval-every", "5", "--eval-batches", "2",
             "--recipe", "blocks")
    keep = run_tiny(tmp_path, "keep", "--linear", "fp8dot", *steps)
    again = run_tiny(tmp_path, "again", "--linear", "fp8dot", *steps,
                     "--recompute-weight-transpose")
    run = of_type(again, "run")[0]
    assert run["recompute_weight_transpose"] is True
    assert "cast again in the backward" in run["linear_description"]
    assert "cast again" not in of_type(keep, "run")[0]["linear_description"]
    for kind, key in (("train", "loss"), ("eval", "val_loss")):
        assert [r[key] for r in of_type(again, kind)] == [r[key] for r in of_type(keep, kind)]


@pytest.mark.parametrize("recipe, fast, promoted", [("seed", 1, 2), ("fast", 3, 0),
                                                    ("promoted", 0, 3)])
def test_fp8dot_recipes_give_the_jitted_step_their_gemms(train_modules, recipe, fast, promoted):
    pytest.importorskip("fp8dot.flax")
    import train_flax

    args = train_flax.parse_args(["--linear", "fp8dot", "--recipe", recipe])
    model, _ = train_flax.make_model(args)
    tokens = jax.numpy.zeros((args.batch_size, args.seq_len), jax.numpy.int32)
    # Shapes only: gemms lowers the step without running it.
    state = jax.eval_shape(functools.partial(train_flax.create_state, model, args), tokens, tokens)
    counts, _ = train_flax.fp8_gemms(train_flax.train_step, state, tokens, tokens)
    swapped = SWAPPED_PER_BLOCK * args.layers
    expected = {"fp8-fast": fast * swapped, "fp8-promoted": promoted * swapped}
    assert counts == {"fp8dot": {k: n for k, n in expected.items() if n}}


@pytest.mark.parametrize("config", ["tiny", "h200-300m"])
@pytest.mark.parametrize("mlp", ["swiglu", "gelu"])
def test_flax_model_has_the_torch_models_parameter_counts(train_modules, config, mlp):
    import gpt
    import gpt_flax
    import train_flax

    args = train_flax.parse_args(["--config", config, "--mlp", mlp])
    model, _ = train_flax.make_model(args)
    tokens = jax.numpy.zeros((1, args.seq_len), jax.numpy.int32)
    flax_params = jax.eval_shape(model.init, jax.random.PRNGKey(0), tokens, tokens)["params"]
    with torch.device("meta"):  # shapes only: h200-300m's 309M parameters are not allocated
        torch_model = gpt.GPT(model.config)
    assert gpt_flax.parameter_counts(flax_params) == gpt.parameter_counts(torch_model)
