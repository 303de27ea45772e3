"""fp8dot inside jax.jit: the seed's rule (forward DEFAULT -> fast, gradients HIGHEST -> promoted)
as XLA custom calls, and what the compiled program will run.

    PYTHONPATH=build/python python3 examples/python/jax_quickstart.py   (after scripts/build.sh)
    python3 examples/python/jax_quickstart.py                            (after pip install .)
"""

import jax
import jax.numpy as jnp

import fp8dot.jax as fj

x = jax.random.normal(jax.random.PRNGKey(0), (256, 512), jnp.float32)
w = jax.random.normal(jax.random.PRNGKey(1), (512, 128), jnp.float32) * 0.05


def loss(x, w):
    return jnp.mean(jnp.tanh(fj.fp8_dot_general(x, w, recipe=fj.Recipe.seed())))


print(f"jax {jax.__version__} on {jax.devices()[0].platform}")
print("The FP8 GEMMs of jit(grad(loss)), and the accumulation each resolves to:")
print(fj.explain(jax.grad(loss, argnums=(0, 1)), x, w))
dx, dw = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
rx, rw = jax.grad(lambda x, w: jnp.mean(jnp.tanh(x @ w)), argnums=(0, 1))(x, w)
relative = lambda a, b: float(jnp.linalg.norm(a - b) / jnp.linalg.norm(b))
print(f"gradients vs f32: relative error dx {relative(dx, rx):.4f}, dw {relative(dw, rw):.4f} "
      "(e5m2 gradients: unit roundoff 0.125)")
