"""The MLP block's GEMMs as fp8dot.torch.explain lists them (engine per GEMM), under the
process's FP8DOT_AUTOTUNE: which engine and algorithm the race picks for each."""
import sys

import torch

import fp8dot.torch as ft

sys.path.insert(0, "bench/python")
import mlp_block_bench as bench  # noqa: E402

model = bench.MlpBlock(4096, 16384, "tanh").cuda().bfloat16()
ft.convert(model, ft.Recipe.seed(scaling="delayed"))
x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
for _ in range(2):
    model(x).sum().backward()
torch.cuda.synchronize()
print(ft.explain(model))
