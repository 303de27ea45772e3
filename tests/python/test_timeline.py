"""fp8dot.torch.timeline: the GPU timeline report from profiler events (fake events here, whose
times are worked out by hand; the real ones come from train.py --profile on the GPU)."""

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from fp8dot.torch.timeline import kind_of, summarize  # noqa: E402

CUDA = torch.autograd.DeviceType.CUDA


def kernel(name, start_us, end_us, device_type=CUDA):
    return SimpleNamespace(name=name, device_type=device_type,
                           time_range=SimpleNamespace(start=start_us, end=end_us))


def test_kinds_follow_the_kernel_names():
    assert kind_of("nvjet_sm90_qqtst_192x192_128x4_1x2_h_bz_coopB_TNN") == "gemm"
    assert kind_of("cudnn_generated_fort_native_sdpa_sm90_flash_fprop") == "attention"
    assert kind_of("void fp8dot::cuda::(anonymous namespace)::quantize_cast_kernel<float>") == \
        "fp8dot quantize"
    assert kind_of("Memset (Device)") == "memset/memcpy"
    assert kind_of("triton_poi_fused_silu_0") == "other"


def test_times_idle_gaps_and_what_the_gpu_waited_for():
    # Two steps. Step 1: GEMM 0-100 us, gap 20, cast 120-150, gap 50, GEMM 200-300.
    # Step 2: GEMM 1000-1100, a copy on another stream overlapping it (1050-1080: no gap),
    # gap 100 before the cast 1200-1230. A user annotation spans everything and is ignored, as
    # is a CPU op.
    events = [
        kernel("## Call CompiledFxGraph", 0, 1300),
        kernel("aten::mm", 0, 300, device_type=torch.autograd.DeviceType.CPU),
        kernel("nvjet_gemm", 0, 100), kernel("quantize_cast_kernel", 120, 150),
        kernel("nvjet_gemm", 200, 300), kernel("nvjet_gemm", 1000, 1100),
        kernel("Memcpy DtoD", 1050, 1080), kernel("quantize_cast_kernel", 1200, 1230),
    ]
    report = summarize(events, steps=2, wall_ms_per_step=1.0)
    lines = report.splitlines()
    assert lines[0] == ("GPU timeline, ms per step (mean of 2 profiled steps; host clock 1.000 "
                        "ms per step under the profiler):")
    # Span 0-1230 us = 0.615 ms a step; kernels 300 + 60 + 30 us = 0.195 ms a step; idle
    # 20 + 50 + 700 (between the steps) + 100 us = 0.435 ms a step; outside the span 0.385.
    assert lines[1].split() == ["first", "kernel", "to", "last", "0.615", "kernels", "0.195",
                                "idle", "between", "them", "0.435", "before", "the", "first",
                                "/", "after", "the", "last", "0.385"]
    kinds = {line.split()[0]: float(line.split()[-1]) for line in lines[2:5]}
    assert kinds == {"gemm": 0.15, "fp8dot": 0.03, "memset/memcpy": 0.015}
    assert "kernels by time (3 launches per step):" in report  # 6 kernels over 2 steps
    waited = lines[lines.index("idle before each kernel (the host launched it after the GPU "
                               "ran dry):") + 1:]
    # Gaps charged to the kernel after them: 700 + 50 us before GEMMs, 20 + 100 before casts.
    assert waited[0].split()[:3] == ["0.375", "ms", "x1"]
    assert waited[0].split()[3] == "nvjet_gemm"
    assert waited[1].split()[:4] == ["0.060", "ms", "x1", "quantize_cast_kernel"]
    assert len(waited) == 2  # the overlapping copy waited for nothing


def test_without_the_host_time_or_kernels():
    report = summarize([kernel("nvjet_gemm", 0, 100)], steps=1)
    assert report.splitlines()[0] == "GPU timeline, ms per step (mean of 1 profiled steps):"
    assert "before the first" not in report
    assert summarize([kernel("aten::mm", 0, 1, torch.autograd.DeviceType.CPU)], 1) == \
        "no GPU kernels were recorded\n"
