"""fp8dot's Flax drop-in against Flax's own Fp8DirectDotGeneralOp, both with Flax's delayed recipe,
on the CPU: do their states evolve alike, and how do their FP8 casts differ?

1. A two-layer bf16 MLP trained 40 steps by each, with a 4-step amax history (so the history
   fills and rolls within the run) on inputs whose scale shrinks 15% a step: the loss and every
   layer's scales, step by step.
2. One cast of the same bf16 tensor with the same scale: Flax divides in the layer's dtype
   (bf16: x / bf16(scale) rounded to bf16, then to FP8, two roundings), fp8dot multiplies by the
   f32 reciprocal and rounds once. How many FP8 values differ, and each cast's error.

    python bench/python/flax_delayed_compare.py
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.linen import fp8_ops
from flax.training.train_state import TrainState

import fp8dot.flax
from fp8dot.jax.quantize import quantize

HISTORY = 4


class Mlp(nn.Module):
    dot_general_cls: object

    @nn.compact
    def __call__(self, x):
        h = nn.gelu(nn.Dense(128, dtype=jnp.bfloat16, dot_general_cls=self.dot_general_cls)(x))
        return nn.Dense(64, dtype=jnp.bfloat16, dot_general_cls=self.dot_general_cls)(h)


def train(dot_general_cls, steps=40):
    model = Mlp(dot_general_cls)
    rng = np.random.default_rng(0)
    variables = model.init(jax.random.PRNGKey(0), jnp.zeros((256, 64), jnp.float32))
    state = TrainState.create(apply_fn=model.apply, params=variables, tx=optax.adam(1e-2))

    @jax.jit
    def step(state, x, y):
        loss, grads = jax.value_and_grad(
            lambda v: jnp.mean((state.apply_fn(v, x).astype(jnp.float32) - y) ** 2))(state.params)
        return state.apply_gradients(grads=grads), loss

    rows = []
    for n in range(steps):
        factor = 3.0 * 0.85 ** n
        x = jnp.asarray(rng.standard_normal((256, 64)) * factor, jnp.float32)
        state, loss = step(state, x, jnp.sin(x) * factor)
        fp8_state = state.params["_overwrite_with_gradient"]
        scales = {f"{layer}.{name}": float(np.asarray(value).ravel()[0])
                  for layer, modules in fp8_state.items()
                  for module in modules.values() for name, value in module.items()
                  if name.endswith("scale")}
        rows.append((float(loss), scales))
    return rows


def compare_training():
    flax_rows = train(functools.partial(fp8_ops.Fp8DirectDotGeneralOp,
                                        amax_history_length=HISTORY))
    ours_rows = train(functools.partial(fp8dot.flax.DotGeneral, amax_history_length=HISTORY))
    first_scale_difference = None
    print("step  loss (Flax)  loss (fp8dot)")
    for n, ((flax_loss, flax_scales), (ours_loss, ours_scales)) in enumerate(zip(flax_rows,
                                                                                 ours_rows)):
        if n % 5 == 0 or n == len(flax_rows) - 1:
            print(f"{n:4d}  {flax_loss:11.6f}  {ours_loss:13.6f}")
        if first_scale_difference is None and flax_scales != ours_scales:
            first_scale_difference = n
    print(f"scales identical up to step {first_scale_difference} (then the trajectories have "
          "moved apart by the casts' differences)")


def compare_casts():
    rng = np.random.default_rng(1)
    print("distribution  format         differing  L1 error Flax  L1 error fp8dot")
    for distribution in ("normal", "lognormal"):
        for fp8 in (jnp.float8_e4m3fn, jnp.float8_e5m2):
            shape = (2048, 1024)
            raw = (rng.standard_normal(shape) if distribution == "normal" else
                   rng.lognormal(0, 2, shape) * rng.choice([-1, 1], shape))
            x = jnp.asarray(raw, jnp.bfloat16)
            fp8_max = float(jnp.finfo(fp8).max)
            scale = jnp.asarray([float(jnp.max(jnp.abs(x)).astype(jnp.float32)) / fp8_max * 1.37],
                                jnp.float32)
            exact = np.asarray(x.astype(jnp.float32), np.float64)
            # Flax's cast as its layer runs it (compute dtype bf16) and its dequantisation.
            flax_q = fp8_ops.quantize(x, fp8, scale, jnp.bfloat16)
            flax_x = np.asarray(fp8_ops.dequantize(flax_q, jnp.bfloat16, scale)
                                .astype(jnp.float32), np.float64)
            ours_q, ours_scale = quantize(x, fp8, "tensor", scale)
            ours_x = np.asarray(ours_q.astype(jnp.float32), np.float64) * float(ours_scale[0])
            differ = np.mean(np.asarray(flax_q.astype(jnp.float32)) !=
                             np.asarray(ours_q.astype(jnp.float32)))
            error = lambda approx: np.abs(approx - exact).sum() / np.abs(exact).sum()
            print(f"{distribution:12s}  {jnp.dtype(fp8).name:13s}  {differ:8.2%}  "
                  f"{error(flax_x):13.4e}  {error(ours_x):15.4e}")


if __name__ == "__main__":
    compare_training()
    compare_casts()
