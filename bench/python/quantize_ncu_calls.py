"""Calls of the quantisation cast kernel for Nsight Compute (scripts/gpu-quantize-check.sh).

On a 16384 x 5504 bf16 tensor: q and qT with the tensor's amax (delayed scaling's call), q and
qT, q only (each with a given scale, so only the cast runs), and current scaling with qT. Then
delayed scaling's call on two more of the 300M model's tensors: a 16384 x 2048 bf16 activation
and a 16384 x 2048 f32 one (an RMSNorm output without autocast). Six cast launches."""

import torch

import fp8dot.torch as ft

E4M3 = torch.float8_e4m3fn


def given_scale(x: torch.Tensor) -> torch.Tensor:
    return (x.abs().amax().float() / 448.0).reshape(())


def main():
    x = torch.randn(16384, 5504, device="cuda", dtype=torch.bfloat16)
    scale = given_scale(x)
    ft.quantize(x, E4M3, "tensor", transposed=True, scale=scale, amax=True)
    ft.quantize(x, E4M3, "tensor", transposed=True, scale=scale, amax=False)
    ft.quantize(x, E4M3, "tensor", transposed=False, scale=scale, amax=False)
    ft.quantize(x, E4M3, "tensor", transposed=True)
    for dtype in (torch.bfloat16, torch.float32):
        activation = torch.randn(16384, 2048, device="cuda", dtype=dtype)
        ft.quantize(activation, E4M3, "tensor", transposed=True, scale=given_scale(activation),
                    amax=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
