"""60 emulated promoted FP8 dots of 512x256x64 (the tiny training config's size) through the
Python package of the build whose python/ folder is argv[1]; prints the seconds."""
import time, sys
sys.path.insert(0, sys.argv[1])
import torch, fp8dot
torch.manual_seed(0)
m, n, k = 512, 256, 64
a = (torch.randn(m, k) * 2).to(torch.float8_e4m3fn)
b = (torch.randn(n, k) * 2).to(torch.float8_e4m3fn)
one = torch.tensor(1.0)
t = time.perf_counter()
for _ in range(60):
    fp8dot.scaled_dot(a, b.t(), lhs_scale=one, rhs_scale=one, out_dtype=torch.float32, precision=("highest","highest"))
print(time.perf_counter() - t)
