"""Compares training runs: a validation-loss PNG and a markdown table from their --log files.

    python examples/train/plot.py runs/*.jsonl --png docs/training-val-loss.png \
        --table docs/training-table.md

Runs are named by their log file's name; train.py (torch) and train_flax.py (JAX) logs plot
together. The table has one row per run: final validation loss (and its difference from the
baseline: the first bf16 run of the same framework, unless --baseline names one run for all),
the median tokens/s after warm-up (and the speed-up over the baseline), peak GPU memory, and
the step the run diverged at, if it did.

When a configuration ran with more than one --seed, a second table sets each configuration's
mean final validation loss against its framework's bf16 mean and against bf16's own
seed-to-seed spread (max - min): the issue's question is whether an FP8 recipe ends within it.
When a configuration ran more than once with the same seed (scripts/gpu-train.sh with ROUNDS),
a speed table gives each one's median ms per step over its repeats against bf16's and
torchao's.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def read_log(path: Path) -> dict:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by_type = lambda kind: [r for r in records if r["type"] == kind]
    runs, summaries = by_type("run"), by_type("summary")
    return {
        "path": path,
        "label": path.stem,  # file names are unique; run labels repeat across seeds
        "run": runs[0] if runs else {},
        "train": by_type("train"),
        "eval": by_type("eval"),
        "summary": summaries[0] if summaries else None,  # None: the run is still going
    }


def smoothed(values: list[float], weight: float = 0.95) -> list[float]:
    """An exponential moving average with bias correction: the train loss is noisy per step."""
    out, average = [], 0.0
    for i, v in enumerate(values, 1):
        average = weight * average + (1 - weight) * v
        out.append(average / (1 - weight**i))
    return out


def plot(runs: list[dict], png: Path) -> None:
    import matplotlib  # only for the PNG: the tables need none (--no-png)

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    figure, (val_axis, train_axis) = plt.subplots(1, 2, figsize=(13, 5))
    for run in runs:
        val_axis.plot([e["step"] for e in run["eval"]], [e["val_loss"] for e in run["eval"]],
                      marker=".", label=run["label"])
        train_axis.plot([t["step"] for t in run["train"]], smoothed([t["loss"] for t in run["train"]]),
                        label=run["label"])
    first = runs[0]["run"]
    title = (f"d_model {first.get('d_model')}, {first.get('layers')} layers, seq {first.get('seq_len')}, "
             f"batch {first.get('batch_size')}; Python {first.get('python_version')} stdlib")
    val_axis.set(xlabel="step", ylabel="validation loss (nats/byte)", title="validation loss\n" + title)
    train_axis.set(xlabel="step", ylabel="training loss (EMA 0.95)", title="training loss")
    # The curves differ by less than 1% at the end: zoom on the last 80% of the steps.
    losses = [e["val_loss"] for r in runs for e in r["eval"][len(r["eval"]) // 5:]]
    if losses:
        val_axis.set_ylim(min(losses) * 0.99, max(losses) * 1.01)
    for axis in (val_axis, train_axis):
        axis.grid(alpha=0.3)
        axis.legend()
    figure.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(png, dpi=120)


def framework(run: dict) -> str:
    return run["run"].get("framework", "torch")  # logs from before train_flax.py say nothing


def table(runs: list[dict], baseline_label: str | None) -> str:
    """baseline_label: the log file name (without .jsonl) to compare every run with; None: each
    run's own framework's first finished bf16 run (a framework's FP8 speed-up is over its own
    bf16)."""
    finished = [r for r in runs if r["summary"]]

    def baseline_of(run: dict) -> dict | None:
        if baseline_label:
            candidates = [r for r in finished if r["label"] == baseline_label]
        else:
            candidates = [r for r in finished if r["run"].get("linear") == "bf16"
                          and framework(r) == framework(run)]
        return candidates[0] if candidates else None

    named = {b["label"] for b in map(baseline_of, runs) if b}
    header = named.pop() if len(named) == 1 else (baseline_label or "its framework's bf16")
    lines = [
        f"| run | final val loss | vs {header} | tokens/s | speed-up | peak memory | steps |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        s = run["summary"]
        baseline = (baseline_of(run) or {}).get("summary")
        if s is None:
            lines.append(f"| {run['label']} | (unfinished: {len(run['train'])} steps) | | | | | |")
            continue
        val = s["final_val_loss"]
        val_text = f"{val:.4f}" if val is not None else f"diverged at step {s['diverged_at']}"
        delta = speedup = ""
        if baseline and val is not None and baseline["final_val_loss"]:
            delta = f"{100 * (val / baseline['final_val_loss'] - 1):+.2f}%"
        if baseline:
            speedup = f"{s['tokens_per_s'] / baseline['tokens_per_s']:.2f}x"
        peak = f"{s['peak_memory_bytes'] / 2**30:.1f} GiB" if s["peak_memory_bytes"] else "n/a"
        lines.append(f"| {run['label']} | {val_text} | {delta} | {s['tokens_per_s']:,.0f} | {speedup} "
                     f"| {peak} | {s['steps']} |")
    return "\n".join(lines) + "\n"


def configuration(run: dict) -> tuple[str, str]:
    """(framework, run label): what repeats across seeds."""
    return framework(run), run["run"].get("label", run["label"])


def seed_table(runs: list[dict]) -> str:
    """Mean and spread of the final validation loss over seeds, per configuration; empty when
    no configuration has two finished seeds."""
    groups: dict[tuple[str, str], dict[int, float]] = {}
    for run in runs:
        s = run["summary"]
        if s is None or s["final_val_loss"] is None:
            continue
        groups.setdefault(configuration(run), {})[run["run"].get("seed")] = s["final_val_loss"]
    if not any(len(losses) > 1 for losses in groups.values()):
        return ""

    def stats(losses: dict[int, float]) -> tuple[float, float]:
        values = list(losses.values())
        return sum(values) / len(values), max(values) - min(values)

    lines = ["| run | seeds | mean final val loss | spread (max - min) | mean vs bf16 mean "
             "| within bf16's spread |", "|---|---|---:|---:|---:|---|"]
    for (frame, label), losses in groups.items():
        mean, spread = stats(losses)
        baseline = groups.get((frame, "bf16"))
        delta = within = ""
        if baseline and label != "bf16":
            base_mean, base_spread = stats(baseline)
            delta = f"{100 * (mean / base_mean - 1):+.2f}%"
            within = ("unknown (one bf16 seed)" if len(baseline) < 2 else
                      "yes" if abs(mean - base_mean) <= base_spread else "no")
        name = label if frame == "torch" else f"{frame}: {label}"
        seeds = ", ".join(str(seed) for seed in sorted(losses, key=str))
        lines.append(f"| {name} | {seeds} | {mean:.4f} | {spread:.4f} "
                     f"({100 * spread / mean:.2f}%) | {delta} | {within} |")
    return "\n".join(lines) + "\n"


def speed_table(runs: list[dict]) -> str:
    """With repeated runs of the same configuration and seed (gpu-train.sh's ROUNDS, which
    interleaves them), the median ms per step of each configuration over its repeats and its
    speed against the medians of bf16 and of each torchao configuration (torchao: its default,
    the seed's rule; torchao-fast: fast accumulation everywhere); short speed runs move by a few
    percent from one run to the next, so one pair of runs cannot settle a 2-5% difference.
    Empty without repeats."""
    groups: dict[tuple[str, str, object], list[float]] = {}
    for run in runs:
        s = run["summary"]
        if s is not None:
            key = (*configuration(run), run["run"].get("seed"))
            groups.setdefault(key, []).append(s["ms_per_step"])
    if not any(len(times) > 1 for times in groups.values()):
        return ""
    medians = {key: statistics.median(times) for key, times in groups.items()}
    references = ["bf16"] + sorted({label for _, label, _ in groups if label.startswith("torchao")})
    lines = ["| run | repeats | ms per step (each) | median | "
             + " | ".join(f"vs {r}" for r in references) + " |",
             "|---|---:|---|---:|" + "---:|" * len(references)]
    for (frame, label, seed), times in groups.items():
        median = medians[(frame, label, seed)]
        versus = []
        for reference in references:
            base = medians.get((frame, reference, seed))
            versus.append(f"{base / median:.3f}x" if base and label != reference else "")
        name = label if frame == "torch" else f"{frame}: {label}"
        each = ", ".join(f"{t:.2f}" for t in times)
        lines.append(f"| {name} | {len(times)} | {each} | {median:.2f} | " + " | ".join(versus)
                     + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", type=Path, help="train.py --log files")
    parser.add_argument("--png", type=Path, default=Path("val_loss.png"))
    parser.add_argument("--no-png", action="store_true",
                        help="the tables only (no matplotlib needed: the GPU machine)")
    parser.add_argument("--table", type=Path, help="write the markdown table here (always printed)")
    parser.add_argument("--baseline", help="the log file name (without .jsonl) the others are compared "
                        "with; default: the first bf16 run")
    args = parser.parse_args()
    runs = [read_log(path) for path in args.logs]
    if not args.no_png:
        plot(runs, args.png)
    markdown = table(runs, args.baseline)
    for extra in (seed_table(runs), speed_table(runs)):
        if extra:
            markdown += "\n" + extra
    print(markdown, end="")
    if not args.no_png:
        print(f"wrote {args.png}")
    if args.table:
        args.table.parent.mkdir(parents=True, exist_ok=True)
        args.table.write_text(markdown)


if __name__ == "__main__":
    main()
