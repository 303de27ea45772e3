"""Where profiled steps spend the GPU's time, from torch.profiler's kernel events.

torch.profiler's op table sums device time per op, which neither shows how long the GPU sat
idle nor names a kernel in full. `summarize` reads the kernels' own start and end times (the
GPU's clock) and reports, per step: the span from the first kernel to the last, the kernel time
by kind (GEMMs, attention, fp8dot's quantisation, ...), the idle time in between, and which
kernels the GPU waited for (each gap is charged to the kernel that ends it: a long gap before a
kernel means the host launched it late).

    with torch.profiler.profile() as profiler:
        for _ in range(steps):
            train_step()
    print(fp8dot.torch.timeline.summarize(profiler.events(), steps, wall_ms_per_step))

examples/train/train.py --profile and bench/python/mlp_block_bench.py --profile use it.
"""

from __future__ import annotations

import collections
from typing import Optional

import torch

KINDS = (  # the first kind whose tag is in a kernel's name (lower case) wins
    ("attention", ("sdpa", "flash", "cudnn", "attention")),
    ("gemm", ("nvjet", "gemm", "xmma", "cutlass", "sm90_")),
    ("fp8dot quantize", ("fp8dot::cuda", "quantize_cast", "amax_kernel", "resolve_given_scale",
                         "scales_from_amax")),
    ("optimizer", ("adam", "multi_tensor", "foreach")),
    ("memset/memcpy", ("memset", "memcpy")),
)


def kind_of(kernel: str) -> str:
    name = kernel.lower()
    for kind, tags in KINDS:
        if any(tag in name for tag in tags):
            return kind
    return "other"


def summarize(events, steps: int, wall_ms_per_step: Optional[float] = None, top: int = 25) -> str:
    """The report for `steps` profiled steps; `events` is profiler.events(), and
    wall_ms_per_step (if known) the host's time per step while they ran."""
    # Kernels, copies and memsets; not the user annotations ("## Call CompiledFxGraph ...")
    # that the profiler also puts on the GPU's timeline, which span whole graphs.
    spans = sorted((event.time_range.start, event.time_range.end, event.name)
                   for event in events if event.device_type == torch.autograd.DeviceType.CUDA
                   and not event.name.startswith("## "))
    if not spans:
        return "no GPU kernels were recorded\n"
    per_kernel = collections.defaultdict(lambda: [0.0, 0])
    per_kind = collections.Counter()
    for start, end, name in spans:
        per_kernel[name][0] += (end - start) / 1000.0 / steps
        per_kernel[name][1] += 1
        per_kind[kind_of(name)] += (end - start) / 1000.0 / steps
    gaps = collections.defaultdict(lambda: [0.0, 0])
    covered_until = spans[0][1]
    idle = 0.0
    for start, end, name in spans[1:]:
        if start > covered_until:  # overlapping kernels (two streams) leave no gap
            gap = (start - covered_until) / 1000.0 / steps
            idle += gap
            gaps[name][0] += gap
            gaps[name][1] += 1
        covered_until = max(covered_until, end)
    gpu_span = (covered_until - spans[0][0]) / 1000.0 / steps
    host = ("" if wall_ms_per_step is None else
            f"; host clock {wall_ms_per_step:.3f} ms per step under the profiler")
    outside = ("" if wall_ms_per_step is None else
               f"   before the first / after the last {wall_ms_per_step - gpu_span:8.3f}")
    lines = [f"GPU timeline, ms per step (mean of {steps} profiled steps{host}):",
             f"  first kernel to last {gpu_span:8.3f}   kernels {sum(per_kind.values()):8.3f}"
             f"   idle between them {idle:8.3f}{outside}"]
    for kind, ms in per_kind.most_common():
        lines.append(f"  {kind:18s} {ms:8.3f}")
    lines.append(f"kernels by time ({len(spans) // steps} launches per step):")
    for name, (ms, count) in sorted(per_kernel.items(), key=lambda item: -item[1][0])[:top]:
        lines.append(f"  {ms:7.3f} ms  x{count / steps:<5g} {name[:160]}")
    lines.append("idle before each kernel (the host launched it after the GPU ran dry):")
    for name, (ms, count) in sorted(gaps.items(), key=lambda item: -item[1][0])[:top]:
        lines.append(f"  {ms:7.3f} ms  x{count / steps:<5g} {name[:160]}")
    return "\n".join(lines) + "\n"
