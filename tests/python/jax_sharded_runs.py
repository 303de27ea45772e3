"""The shard_map runs of test_jax_distributed.py on 2 CPU devices, and the unsharded references:

    python tests/python/jax_sharded_runs.py OUT.npz

A two-layer MLP (Dense 256 -> 512, GELU, Dense 512 -> 256) of fp8dot.jax.fp8_dot_general, its
loss the mean squared error over a 256-row global batch; each scenario writes the sharded and the
unsharded gradients (and delayed scaling's new state) under its name.
"""

import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ["JAX_PLATFORMS"] = "cpu"  # two CPU devices, also on a machine with a GPU

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

import fp8dot.jax as fj  # noqa: E402

try:
    from jax import shard_map
except ImportError:  # older JAX
    from jax.experimental.shard_map import shard_map

ROWS, FEATURES, HIDDEN = 256, 256, 512
RECIPES = {"tensorwise": fj.Recipe.seed(),
           "tensorwise promoted": fj.Recipe.promoted_everywhere(),
           "delayed": fj.Recipe.seed(scaling="delayed", amax_history_length=4),
           "blocks": fj.Recipe.deepseek_blocks()}


def inputs():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    # The second half of the rows 4x larger: each device's own amax differs from the whole's.
    x = jax.random.normal(keys[0], (ROWS, FEATURES)) * jnp.where(
        jnp.arange(ROWS)[:, None] < ROWS // 2, 1.0, 4.0)
    target = jax.random.normal(keys[1], (ROWS, FEATURES))
    w1 = jax.random.normal(keys[2], (FEATURES, HIDDEN)) / 16
    w2 = jax.random.normal(keys[3], (HIDDEN, FEATURES)) / 16
    return x, target, w1, w2


def mlp_loss(recipe, states, reductions, w1, w2, x, target, rows=ROWS):
    """sum((MLP(x) - target)²) / rows, the MLP's layers with `reductions` (one each) and, under
    delayed scaling, `states` (one each)."""
    h = fj.fp8_dot_general(x, w1, recipe=recipe, state=states[0], amax_reduction=reductions[0])
    y = fj.fp8_dot_general(jax.nn.gelu(h), w2, recipe=recipe, state=states[1],
                           amax_reduction=reductions[1])
    return y, jnp.sum((y - target) ** 2) / rows


def data_parallel(name, reduce_amax=True):
    """Each device its half of the rows; gradients summed over "data"."""
    recipe = RECIPES[name]
    mesh = Mesh(np.array(jax.devices()[:2]), ("data",))
    x, target, w1, w2 = inputs()
    delayed = recipe.scaling == "delayed"
    states = ((fj.init_delayed_state(4), fj.init_delayed_state(4)) if delayed else (None, None))
    reduction = fj.AmaxReduction(input="data", grad_output="data") if reduce_amax else None

    def loss(w1, w2, states, x, target):
        return mlp_loss(recipe, states, (reduction, reduction), w1, w2, x, target)[1]

    # The weights and states are the same on every device: their gradients come out summed
    # over "data" (the states' "gradients", their new values, combined by their max).
    sharded = jax.jit(shard_map(jax.grad(loss, argnums=(0, 1, 2)), mesh=mesh,
                                in_specs=(P(), P(), P(), P("data"), P("data")),
                                out_specs=(P(), P(), P())))(w1, w2, states, x, target)
    whole = jax.grad(lambda a, b, s: mlp_loss(recipe, s, (None, None), a, b, x, target)[1],
                     argnums=(0, 1, 2))(w1, w2, states)
    out = {"dw1": (sharded[0], whole[0]), "dw2": (sharded[1], whole[1])}
    if delayed:
        for layer in range(2):
            for key, value in whole[2][layer].items():
                out[f"state{layer}.{key}"] = (sharded[2][layer][key], value)
    return out


def tensor_parallel(name, reduce_amax=True, recompute=False):
    """The first layer column-parallel over "model" (W1's columns), the second row-parallel (W2's
    rows, its partial outputs summed); the whole batch on both devices. recompute: the layers
    cast Wᵀ again in the backward (from their shards, with the scales reduced in the forward)."""
    recipe = RECIPES[name]
    mesh = Mesh(np.array(jax.devices()[:2]), ("model",))
    x, target, w1, w2 = inputs()
    column = fj.AmaxReduction(weight="model", grad_output="model") if reduce_amax else None
    row = fj.AmaxReduction(input="model", weight="model") if reduce_amax else None

    def loss(w1, w2, x, target):
        h = fj.fp8_dot_general(x, w1, recipe=recipe, amax_reduction=column,
                               recompute_weight_transpose=recompute)
        y = jax.lax.psum(fj.fp8_dot_general(jax.nn.gelu(h), w2, recipe=recipe,
                                            amax_reduction=row,
                                            recompute_weight_transpose=recompute), "model")
        return jnp.sum((y - target) ** 2) / ROWS

    sharded = jax.jit(shard_map(jax.grad(loss, argnums=(0, 1)), mesh=mesh,
                                in_specs=(P(None, "model"), P("model", None), P(), P()),
                                out_specs=(P(None, "model"), P("model", None))))(
        w1, w2, x, target)
    whole = jax.grad(lambda a, b: mlp_loss(recipe, (None, None), (None, None), a, b, x,
                                           target)[1], argnums=(0, 1))(w1, w2)
    return {"dw1": (sharded[0], whole[0]), "dw2": (sharded[1], whole[1])}


def flax_data_parallel():
    """fp8dot.flax.DotGeneral (its default: Flax's delayed recipe) in an nn.Dense, data parallel
    with the reduction, against the unsharded Dense: every gradient and state entry. None
    without Flax."""
    try:
        import functools

        import flax.linen as nn
        import fp8dot.flax
    except ImportError:
        return None
    mesh = Mesh(np.array(jax.devices()[:2]), ("data",))
    x, target, _, _ = inputs()

    def dense(reduction):
        return nn.Dense(FEATURES, dot_general_cls=functools.partial(
            fp8dot.flax.DotGeneral, amax_reduction=reduction))

    def loss(variables, x, target, reduction):
        return jnp.sum((dense(reduction).apply(variables, x) - target) ** 2) / ROWS

    variables = dense(None).init(jax.random.PRNGKey(5), x)
    reduction = fj.AmaxReduction(input="data", grad_output="data")
    sharded = jax.jit(shard_map(lambda v, x, t: jax.grad(loss)(v, x, t, reduction), mesh=mesh,
                                in_specs=(P(), P("data"), P("data")), out_specs=P()))(
        variables, x, target)
    whole = jax.grad(loss)(variables, x, target, None)
    by_path = dict(jax.tree_util.tree_leaves_with_path(sharded))
    return {jax.tree_util.keystr(path): (by_path[path], value)
            for path, value in jax.tree_util.tree_leaves_with_path(whole)}


def main(path):
    results = {}
    for name in ("tensorwise", "delayed", "blocks"):
        for key, pair in data_parallel(name).items():
            results[f"dp {name} {key}"] = pair
    for key, pair in data_parallel("tensorwise", reduce_amax=False).items():
        results[f"dp tensorwise no reduction {key}"] = pair
    for key, pair in tensor_parallel("tensorwise promoted").items():
        results[f"tp tensorwise promoted {key}"] = pair
    for key, pair in tensor_parallel("tensorwise promoted", reduce_amax=False).items():
        results[f"tp tensorwise promoted no reduction {key}"] = pair
    for key, pair in tensor_parallel("tensorwise promoted", recompute=True).items():
        results[f"tp tensorwise promoted recompute {key}"] = pair
    for key, pair in (flax_data_parallel() or {}).items():
        results[f"flax {key}"] = pair
    arrays = {}
    for key, (sharded, whole) in results.items():
        arrays[f"{key}|sharded"] = np.asarray(sharded, np.float64)
        arrays[f"{key}|whole"] = np.asarray(whole, np.float64)
    np.savez(path, **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
