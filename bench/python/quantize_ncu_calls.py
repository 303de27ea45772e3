"""Four calls of the quantisation cast kernel on a 16384 x 5504 bf16 tensor, for Nsight Compute
(scripts/gpu-quantize-check.sh): q and qT with the tensor's amax (delayed scaling's call), q and
qT, q only (each with a given scale, so only the cast runs), and current scaling with qT."""

import torch

import fp8dot.torch as ft

E4M3 = torch.float8_e4m3fn


def main():
    x = torch.randn(16384, 5504, device="cuda", dtype=torch.bfloat16)
    scale = (x.abs().amax().float() / 448.0).reshape(())
    ft.quantize(x, E4M3, "tensor", transposed=True, scale=scale, amax=True)
    ft.quantize(x, E4M3, "tensor", transposed=True, scale=scale, amax=False)
    ft.quantize(x, E4M3, "tensor", transposed=False, scale=scale, amax=False)
    ft.quantize(x, E4M3, "tensor", transposed=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
