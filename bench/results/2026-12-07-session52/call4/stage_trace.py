"""Summarises the own kernel's stage traces (stage-trace.diff): per trace, medians over CTAs of
medians over each CTA's steady K-blocks (from block 2 x stages to 4 before the last), in SM
clocks:
  interval   math thread 0 seeing block j + 1 full after block j (the K loop's pace)
  latency    copies of block j issued -> block j seen full (the copy engine's round trip)
  in flight  blocks issued and not yet seen full when block j is seen full
  hold       block j seen full -> its stage released by math thread 0
  refill     stage released (block j - stages) -> the copy thread's copies of block j issued
  wait       the copy thread's wait for block j's empty stage (start of wait -> issue)
and the whole loop: first issue -> last block seen full, over the blocks traced.
  python3 stage_trace.py FILE.trace..."""
import statistics
import struct
import sys

import numpy as np


def summarise(path):
    data = open(path, "rb").read()
    grid, blocks, stages, k_blocks, units, splits = struct.unpack("6i", data[:24])
    t = np.frombuffer(data[24:], dtype=np.int64).reshape(grid, blocks, 4)
    n = min(k_blocks, blocks)
    first, last = 2 * stages, n - 4
    rows = {k: [] for k in ("interval", "latency", "in flight", "hold", "refill", "wait", "loop")}
    for cta in range(grid):
        c = t[cta, :n]
        if (c == 0).any():
            continue  # a CTA without a whole trace (more units than CTAs, or none)
        j = np.arange(first, last)
        rows["interval"].append(np.median(c[j + 1, 2] - c[j, 2]))
        rows["latency"].append(np.median(c[j, 2] - c[j, 1]))
        rows["in flight"].append(np.median(
            [np.sum((c[:, 1] <= c[i, 2]) & (c[:, 2] > c[i, 2])) for i in j]))
        rows["hold"].append(np.median(c[j, 3] - c[j, 2]))
        rows["refill"].append(np.median(c[j, 1] - c[j - stages, 3]))
        rows["wait"].append(np.median(c[j, 1] - c[j, 0]))
        rows["loop"].append(c[n - 1, 2] - c[0, 1])
    name = path.rsplit("/", 1)[-1]
    cells = " | ".join(f"{statistics.median(v):.0f}" if v else "-" for v in rows.values())
    return f"| {name} | {grid} | {stages} | {k_blocks} | {len(rows['loop'])} | {cells} |"


print("| trace | CTAs | stages | K-blocks | CTAs traced | interval | latency | in flight | hold | "
      "refill | wait | loop |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for path in sys.argv[1:]:
    print(summarise(path))
