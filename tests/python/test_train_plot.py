"""examples/train/plot.py's tables from hand-made run logs: per-run rows, with several seeds
the mean against bf16's mean and bf16's own seed-to-seed spread, with repeated runs (rounds)
the median speed against bf16's and torchao's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from train_example_runs import TRAIN_DIR  # the tables need no matplotlib

sys.path.insert(0, str(TRAIN_DIR))
import plot  # noqa: E402


def write_log(directory: Path, label: str, seed: int, val_loss: float,
              framework: str = "torch", ms_per_step: float = 50.0, name: str = "") -> Path:
    linear = label.split("-")[0]
    records = [
        {"type": "run", "framework": framework, "label": label, "linear": linear, "seed": seed},
        {"type": "eval", "step": 10, "val_loss": val_loss},
        {"type": "summary", "label": label, "linear": linear, "final_val_loss": val_loss,
         "tokens_per_s": 1000.0 * (2 if linear == "fp8dot" else 1), "peak_memory_bytes": 2**30,
         "steps": 10, "diverged_at": None, "ms_per_step": ms_per_step},
    ]
    path = directory / f"{framework}-{label}-seed{seed}{name}.jsonl"
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


def test_speed_table_takes_the_median_of_repeated_runs(tmp_path):
    # Three interleaved rounds of bf16, fp8dot and torchao's two configurations (seed 0); one
    # fp8dot round was slow.
    specs = []
    for round_, times in enumerate([(60.0, 46.0, 50.0, 49.0), (62.0, 51.0, 51.0, 48.0),
                                    (61.0, 47.0, 52.0, 50.0)]):
        for label, ms in zip(("bf16", "fp8dot-fast-delayed", "torchao", "torchao-fast"), times):
            specs.append((label, 0, 1.0, "torch", ms, f"-round{round_}"))
    table = plot.speed_table(runs(tmp_path, specs)).splitlines()
    assert table[0] == ("| run | repeats | ms per step (each) | median | vs bf16 | vs torchao | "
                        "vs torchao-fast |")
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in table[2:]}
    assert set(rows) == {"bf16", "fp8dot-fast-delayed", "torchao", "torchao-fast"}
    # Medians 61, 47, 51 and 49 ms: 61 / 47 = 1.298, 51 / 47 = 1.085, 49 / 47 = 1.043.
    assert rows["fp8dot-fast-delayed"][1:] == ["3", "46.00, 51.00, 47.00", "47.00", "1.298x",
                                               "1.085x", "1.043x |"]
    assert rows["torchao"][3:] == ["51.00", "1.196x", "", "0.961x |"]
    assert rows["bf16"][3:] == ["61.00", "", "0.836x", "0.803x |"]


def test_speed_table_needs_repeats(tmp_path):
    logs = runs(tmp_path, [("bf16", 0, 1.0), ("fp8dot-seed", 0, 1.01), ("fp8dot-seed", 1, 1.0)])
    assert plot.speed_table(logs) == ""  # two seeds are not repeats of one run
