#!/usr/bin/env python3
"""Plots error vs K from `fp8dot accuracy --csv` files: one line per mode, backend and
distribution. Usage: plot_accuracy.py OUT.png LABEL=FILE.csv [LABEL=FILE.csv ...]
(e.g. H200=h200.csv emulation=cpu.csv). Needs matplotlib."""
import csv
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as error:
    sys.exit(f"plot_accuracy.py: matplotlib is not installed ({error}); pip install matplotlib")

if len(sys.argv) < 3:
    sys.exit(__doc__)
out = sys.argv[1]
distributions = []
series = {}  # (label, distribution, mode) -> [(k, error)]
labels = []
for argument in sys.argv[2:]:
    label, _, path = argument.partition("=")
    labels.append(label)
    with open(path or label) as f:
        for row in csv.DictReader(f):
            d = row["distribution"]
            if d not in distributions:
                distributions.append(d)
            for mode in ("fast", "promoted"):
                series.setdefault((label, d, mode), []).append((int(row["k"]), float(row[mode + "_error"])))

fig, axes = plt.subplots(1, len(distributions), figsize=(4.2 * len(distributions), 3.8), squeeze=False)
for ax, d in zip(axes[0], distributions):
    for (label, dist, mode), points in sorted(series.items()):
        if dist != d:
            continue
        points.sort()
        # The first file: lines with dots; later files: crosses only, so that agreement shows
        # as a cross on every dot rather than one line hiding the other.
        first = label == labels[0]
        ax.loglog([k for k, _ in points], [e for _, e in points],
                  ("-" if mode == "fast" else "--") if first else "none",
                  marker="o" if first else "x", markersize=3 if first else 7,
                  color="C0" if mode == "fast" else "C1", alpha=1.0 if first else 0.8,
                  label=f"{label} {mode}")
    ax.set_title(d)
    ax.set_xlabel("K")
    ax.grid(True, which="both", alpha=0.3)
axes[0][0].set_ylabel("relative Frobenius error")
axes[0][-1].legend(fontsize=7)
fig.suptitle("FP8 fast vs promoted accumulation (e4m3 x e4m3, f32 output)")
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
