import sys, torch, fp8dot.torch as ft
E4M3 = torch.float8_e4m3fn
rows, cols = 16384, 5504
x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
s = (x.abs().amax().float() / 448.0).reshape(())
# order: qT+amax, qT no amax, q only no amax, current scaling qT (no given scale)
ft.quantize(x, E4M3, "tensor", transposed=True, scale=s, amax=True)
ft.quantize(x, E4M3, "tensor", transposed=True, scale=s, amax=False)
ft.quantize(x, E4M3, "tensor", transposed=False, scale=s, amax=False)
ft.quantize(x, E4M3, "tensor", transposed=True)
torch.cuda.synchronize()
