"""Where does cuBLASLt round when it applies tensor scales? A probe for the CPU emulation.

On the H200 the seed recipe's forward (scales amax/448, not powers of two) differed from the
CPU emulation by up to 1 f32 ulp in most elements, while unscaled dots agree bit for bit. The
emulation computes f32(acc * f32(scale_a * scale_b)). This runs the same FP8 dots on the GPU
with scales, takes the unscaled accumulator from the emulation (bit-exact without scales), and
counts, for each candidate order of roundings, the elements it reproduces exactly:

    a  f32(acc * f32(sa * sb))                 (the emulation today)
    b  f32(f32(acc * sa) * sb)
    d  f32(acc * (sa * sb)) with the product exact (f64)

    PYTHONPATH=/tmp/site python3 dev/scale_rounding_probe.py     (on the GPU machine)
"""

import numpy as np
import torch
import ml_dtypes

import fp8dot

E4M3 = torch.float8_e4m3fn


def main():
    if fp8dot.cuda_device() is None:
        raise SystemExit(f"needs the GPU: {fp8dot.cuda_unavailable_reason()}")
    rng = np.random.default_rng(0)
    for m, n, k in [(64, 96, 256), (128, 128, 4096)]:
        a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32)).to(E4M3)
        b = torch.from_numpy(rng.standard_normal((n, k)).astype(np.float32)).to(E4M3)
        for precision in ("default", "highest"):
            a_host = a.view(torch.uint8).numpy().view(ml_dtypes.float8_e4m3fn)
            b_host = b.view(torch.uint8).numpy().view(ml_dtypes.float8_e4m3fn)
            # f32, the emulation without scales (bit-exact with the H200 there)
            acc = fp8dot.scaled_dot(a_host, b_host.T, precision=precision)
            unscaled_gpu = fp8dot.scaled_dot(a.cuda(), b.cuda().t(), precision=precision).cpu()
            exact_unscaled = int((unscaled_gpu.numpy() == acc).sum())
            for sa, sb in [(0.00937591, 0.00049281), (3.1, 0.7), (0.5, 0.25)]:
                out = fp8dot.scaled_dot(a.cuda(), b.cuda().t(), precision=precision,
                                        lhs_scale=torch.tensor(sa, device="cuda"),
                                        rhs_scale=torch.tensor(sb, device="cuda")).cpu().numpy()
                f32 = np.float32
                candidates = {
                    "a f32(acc*f32(sa*sb))": acc * (f32(sa) * f32(sb)),
                    "b f32(f32(acc*sa)*sb)": (acc * f32(sa)) * f32(sb),
                    "d f32(acc*(sa*sb) exact)": (acc.astype(np.float64) * (np.float64(f32(sa)) *
                                                 np.float64(f32(sb)))).astype(np.float32),
                }
                counts = {name: int((value.astype(np.float32) == out).sum())
                          for name, value in candidates.items()}
                print(f"{m}x{n}x{k} {precision:7s} scales ({sa}, {sb}): unscaled GPU == emulation "
                      f"{exact_unscaled}/{m * n}; " +
                      ", ".join(f"{name}: {count}/{m * n}" for name, count in counts.items()))


if __name__ == "__main__":
    main()
