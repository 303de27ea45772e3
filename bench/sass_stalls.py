#!/usr/bin/env python3
"""Where a kernel's warps wait: a summary of an Nsight Compute source-page export.

Input: `ncu --import REPORT --page source --csv --print-source sass > FILE` of a report taken with
`--section SourceCounters` (scripts/gpu-own-gemm-ncu.sh writes these with NCU_SOURCE=1). Output:
the stall reasons over all warp samples, then the instructions with the most samples, each with
the instructions before it, so that a spin loop's branch shows which barrier it waits on (the
SYNCS.PHASECHK try-wait and its shared-memory offset just above).

    python3 bench/sass_stalls.py FILE [--top 8] [--context 6]
"""

import argparse
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def read_export(path):
    """(kernel name, header, rows) of an ncu source-page CSV: a kernel-name line, the header, then
    one row per SASS instruction."""
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    if len(lines) < 3 or not lines[0] or lines[0][0] != "Kernel Name":
        raise ValueError(f"{path}: not an ncu source-page CSV export (first cell "
                         f"{lines[0][0] if lines and lines[0] else 'missing'!r}, expected "
                         f"'Kernel Name')")
    header = lines[1]
    for column in ("Address", "Source", SAMPLES):
        if column not in header:
            raise ValueError(f"{path}: no '{column}' column (take the report with "
                             f"--section SourceCounters)")
    return lines[0][1], header, [row for row in lines[2:] if len(row) == len(header)]


def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0


def summarise(path, top=8, context=6):
    kernel, header, rows = read_export(path)
    column = {name: i for i, name in enumerate(header)}
    reasons = [name for name in header if name.startswith("stall_") and "(Not Issued)" not in name]
    total = sum(number(row[column[SAMPLES]]) for row in rows)
    if total == 0:
        raise ValueError(f"{path}: no warp samples")
    out = [f"kernel: {kernel[:160]}", f"warp samples: {total:.0f}", "", "stall reasons:"]
    by_reason = {r: sum(number(row[column[r]]) for row in rows) for r in reasons}
    for reason, samples in sorted(by_reason.items(), key=lambda item: -item[1])[:8]:
        out.append(f"  {reason[len('stall_'):]:<20} {100 * samples / total:5.1f}%")
    out += ["", f"top {top} instructions (share of samples; the {context} before each):"]
    order = sorted(range(len(rows)), key=lambda i: -number(rows[i][column[SAMPLES]]))
    for i in order[:top]:
        out.append("")
        for j in range(max(0, i - context), i + 1):
            share = 100 * number(rows[j][column[SAMPLES]]) / total
            mark = ">" if j == i else " "
            out.append(f"{mark} {rows[j][column['Address']][-5:]:>5} {share:5.1f}%  "
                       f"{rows[j][column['Source']].strip()[:90]}")
    return "\n".join(out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export")
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--context", type=int, default=6)
    args = parser.parse_args(argv)
    try:
        print(summarise(args.export, args.top, args.context))
    except (OSError, ValueError) as error:
        print(f"sass_stalls: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
