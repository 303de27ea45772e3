#!/usr/bin/env python3
"""Times XLA's compiled scaled FP8 dot at M=N=K=SIZE on the GPU (dequantised in f32 or bf16) and
writes the module's HLO for `fp8dot run`. Usage: time_xla.py OUT_DIR [SIZE]. Median of 20 timed
calls after 5 warm-up calls; each call is synchronised (block_until_ready), as a user sees it."""
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

OUT = sys.argv[1]
SIZE = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
os.makedirs(OUT, exist_ok=True)
k1, k2 = jax.random.split(jax.random.PRNGKey(0))
a = jax.random.uniform(k1, (SIZE, SIZE), minval=-4, maxval=4).astype(jnp.float8_e4m3fn)
b = jax.random.uniform(k2, (SIZE, SIZE), minval=-4, maxval=4).astype(jnp.float8_e4m3fn)
sa, sb = jnp.float32(0.5), jnp.float32(1.5)

for name, dtype in (("f32", jnp.float32), ("bf16", jnp.bfloat16)):
    def f(x, y, x_scale, y_scale, dtype=dtype):
        return jnp.dot(x.astype(dtype) * x_scale.astype(dtype), y.astype(dtype) * y_scale.astype(dtype),
                       preferred_element_type=dtype)
    lowered = jax.jit(f).lower(a, b, sa, sb)
    with open(os.path.join(OUT, f"scaled_dot_{name}_{SIZE}.hlo"), "w") as out:
        out.write(lowered.compiler_ir("hlo").as_hlo_text())
    compiled = lowered.compile()
    fp8_gemm = "__cublas$lt$matmul$f8" in compiled.as_text()
    for _ in range(5):
        compiled(a, b, sa, sb).block_until_ready()
    times = []
    for _ in range(20):
        start = time.perf_counter()
        compiled(a, b, sa, sb).block_until_ready()
        times.append(time.perf_counter() - start)
    ms = float(np.median(times)) * 1e3
    print(f"xla scaled_dot_{name} {SIZE}^3: {ms:.3f} ms, {2 * SIZE**3 / ms / 1e9:.0f} TFLOP/s, "
          f"FP8 GEMM emitted: {fp8_gemm}", flush=True)
