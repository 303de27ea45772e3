"""examples/train/plot.py's tables from hand-made run logs: per-run rows, and with several seeds
the mean against bf16's mean and bf16's own seed-to-seed spread."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
from train_example_runs import TRAIN_DIR  # noqa: E402

sys.path.insert(0, str(TRAIN_DIR))
import plot  # noqa: E402


def write_log(directory: Path, label: str, seed: int, val_loss: float,
              framework: str = "torch") -> Path:
    linear = label.split("-")[0]
    records = [
        {"type": "run", "framework": framework, "label": label, "linear": linear, "seed": seed},
        {"type": "eval", "step": 10, "val_loss": val_loss},
        {"type": "summary", "label": label, "linear": linear, "final_val_loss": val_loss,
         "tokens_per_s": 1000.0 * (2 if linear == "fp8dot" else 1), "peak_memory_bytes": 2**30,
         "steps": 10, "diverged_at": None},
    ]
    path = directory / f"{framework}-{label}-seed{seed}.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def runs(directory: Path, specs) -> list[dict]:
    return [plot.read_log(write_log(directory, *spec)) for spec in specs]


def test_seed_table_sets_each_recipe_against_bf16s_spread(tmp_path):
    logs = runs(tmp_path, [("bf16", 0, 1.000), ("bf16", 1, 1.020),
                           ("fp8dot-seed", 0, 1.005), ("fp8dot-seed", 1, 1.025),
                           ("fp8dot-fast", 0, 1.050), ("fp8dot-fast", 1, 1.060)])
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")
            for line in plot.seed_table(logs).splitlines()[2:]}
    assert set(rows) == {"bf16", "fp8dot-seed", "fp8dot-fast"}
    assert rows["bf16"][1:4] == ["0, 1", "1.0100", "0.0200 (1.98%)"]
    # seed: mean 1.015, +0.50% of bf16's 1.010, 0.005 away, inside bf16's spread of 0.020.
    assert rows["fp8dot-seed"][2] == "1.0150" and rows["fp8dot-seed"][4] == "+0.50%"
    assert rows["fp8dot-seed"][5] == "yes |"
    # fast: mean 1.055, 0.045 away: outside.
    assert rows["fp8dot-fast"][4] == "+4.46%" and rows["fp8dot-fast"][5] == "no |"


def test_seed_table_needs_two_seeds_and_says_when_bf16_has_one(tmp_path):
    (tmp_path / "single").mkdir()
    single = runs(tmp_path / "single", [("bf16", 0, 1.0), ("fp8dot-seed", 0, 1.01)])
    assert plot.seed_table(single) == ""  # one seed each: the per-run table is all there is
    (tmp_path / "one_bf16").mkdir()
    logs = runs(tmp_path / "one_bf16", [("bf16", 0, 1.0), ("fp8dot-seed", 0, 1.01),
                                       ("fp8dot-seed", 1, 1.03)])
    row = [line for line in plot.seed_table(logs).splitlines() if "fp8dot-seed" in line][0]
    assert row.endswith("| +2.00% | unknown (one bf16 seed) |")


def test_seed_table_keeps_frameworks_apart(tmp_path):
    logs = runs(tmp_path, [("bf16", 0, 1.0, "jax"), ("bf16", 1, 1.1, "jax"),
                           ("fp8dot-seed", 0, 1.05, "jax"), ("fp8dot-seed", 1, 1.05, "jax"),
                           ("bf16", 0, 2.0), ("bf16", 1, 2.0)])
    rows = plot.seed_table(logs).splitlines()[2:]
    jax_row = [row for row in rows if row.startswith("| jax: fp8dot-seed")][0]
    assert "| +0.00% | yes |" in jax_row  # against JAX's bf16 mean (1.05), not torch's (2.0)
    assert any(row.startswith("| bf16 |") for row in rows)  # torch's bf16, its own row
