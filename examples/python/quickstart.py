"""fp8dot from Python: the precision decides the accumulation, on numpy arrays or torch tensors.

    PYTHONPATH=build/python python3 examples/python/quickstart.py   (after scripts/build.sh)
    python3 examples/python/quickstart.py                            (after pip install .)
"""

import numpy as np

import fp8dot

try:
    import torch
except ImportError:  # the torch part is skipped without torch
    torch = None

print(f"fp8dot {fp8dot.__version__}; GPU: {fp8dot.cuda_device() or 'none (' + fp8dot.cuda_unavailable_reason() + ')'}")
for precision in [("default", "default"), ("highest", "highest")]:
    print(f"  e4m3 x e4m3 at precision {precision}: "
          f"{fp8dot.resolve_accumulation('float8_e4m3fn', 'float8_e4m3fn', precision)}")

# One scaled dot on numpy arrays (ml_dtypes FP8): the CPU emulates Hopper's accumulator, so fast
# accumulation loses bits exactly as an H200 does.
import ml_dtypes

rng = np.random.default_rng(0)
a = np.abs(rng.standard_normal((64, 4096))).astype(ml_dtypes.float8_e4m3fn)
b = np.abs(rng.standard_normal((4096, 64))).astype(ml_dtypes.float8_e4m3fn)
exact = a.astype(np.float64) @ b.astype(np.float64)
for precision in ("default", "highest"):
    d = fp8dot.scaled_dot(a, b, precision=precision)
    error = np.linalg.norm(d - exact) / np.linalg.norm(exact)
    print(f"  numpy, K=4096, precision {precision:8}: relative error {error:.2e}")

# Quantisation: an activation [M, K] with 1x128 scales, and its transpose [K, M] with the scales
# of its own contracting dim (what a weight-gradient GEMM takes), from one read of x.
x = rng.standard_normal((256, 384)).astype(np.float32) * 10
q = fp8dot.quantize(x, "float8_e4m3fn", "1x128", transposed=True)
back = q.q.astype(np.float32) * np.repeat(q.scale, 128, axis=1)
error = np.linalg.norm(back - x) / np.linalg.norm(x)
print(f"  quantize 1x128: q {q.q.shape} scale {q.scale.shape}, q_t {q.q_t.shape} scale_t "
      f"{q.scale_t.shape}; relative error {error:.3f} (e4m3 rounds to within 2^-4)")

if torch is not None:
    import fp8dot.torch as ft

    device = "cuda" if fp8dot.cuda_device() and torch.cuda.is_available() else "cpu"
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256))
    ft.convert(model.to(device), ft.Recipe.seed())  # forward fast, gradients promoted
    x = torch.randn(128, 256, device=device)
    model(x).square().mean().backward()
    print(f"\nfp8dot.torch on {device}: every GEMM of a 2-layer MLP and its accumulation")
    print(ft.explain(model))
