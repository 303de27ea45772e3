"""fp8dot.jax.fp8_dot_general(recompute_weight_transpose=True) and fp8dot.flax.DotGeneral's
option: dgrad's FP8 W operand quantised again in the backward instead of kept from the forward.
The same values and gradients bit for bit under every recipe and both quantisations, no FP8 copy
of the weight among the residuals, and (on the GPU) a compiled multi-layer step that holds fewer
temporary bytes."""

import dataclasses
import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
fj = pytest.importorskip("fp8dot.jax")
ffl = pytest.importorskip("fp8dot.flax")

from test_jax import PLATFORMS, _gpu_device, device, gpu, random  # noqa: E402

RECIPES = {
    "seed-tensorwise": lambda q: fj.Recipe.seed(quantization=q),
    "seed-delayed": lambda q: fj.Recipe.seed(scaling="delayed", amax_history_length=4,
                                             quantization=q),
    "seed-rowwise": lambda q: fj.Recipe.seed(scaling="rowwise", quantization=q),
    "deepseek-blocks": lambda q: fj.Recipe.deepseek_blocks(quantization=q),
    # dgrad's weight in another dtype than the forward's: quantised on its own in both paths.
    "e5m2-dgrad-weight": lambda q: fj.Recipe.seed(quantization=q).replace(
        dgrad=dataclasses.replace(fj.Recipe.seed().dgrad, lhs_dtype=fj.E4M3, rhs_dtype=fj.E5M2)),
}
# Partial 128-blocks and rows in both dims: every scale granularity's edge cases.
ROWS, IN_FEATURES, OUT_FEATURES = 72, 200, 136
# nn.Dense's kernel [K, N] (quantised as stored, the forward's operand its transpose), and the
# same kernel given as [N, K] (contracting its dim 1: the forward's operand as stored).
LAYOUTS = {"kn": None, "nk": (((1,), (1,)), ((), ()))}


def _bits(array):
    return np.asarray(array).view(np.uint8 if array.dtype.itemsize == 1 else
                                  np.uint16 if array.dtype.itemsize == 2 else np.uint32)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("quantization", ["xla", "kernel"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("recipe_name", list(RECIPES))
def test_quantising_the_transpose_again_is_the_same_step_bit_for_bit(platform, quantization,
                                                                   layout, recipe_name):
    """Value, dx, dw and (delayed scaling) the updated state of a jitted step, with and without
    the option, on bf16 data whose second call starts from the first's state."""
    recipe = RECIPES[recipe_name](quantization)
    on = device(platform)
    x = jax.device_put(random((ROWS, IN_FEATURES), 20, jnp.bfloat16), on)
    w = jax.device_put(random((IN_FEATURES, OUT_FEATURES), 21, jnp.bfloat16, scale=0.05), on)
    if layout == "nk":
        w = w.T
    dy = jax.device_put(random((ROWS, OUT_FEATURES), 22, jnp.float32), on)
    state = (jax.device_put(fj.init_delayed_state(4), on) if recipe.scaling == "delayed"
             else None)

    def step(recompute):
        def loss(x, w, state):
            y = fj.fp8_dot_general(x, w, LAYOUTS[layout], recipe=recipe, state=state,
                                   recompute_weight_transpose=recompute)
            return jnp.sum(y.astype(jnp.float32) * dy)
        return jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))

    results = {}
    for recompute in (False, True):
        value, (dx, dw, new_state) = step(recompute)(x, w, state)
        if state is not None:  # a second step from the updated state: its delayed scales
            value, (dx, dw, new_state) = step(recompute)(x * 2, w, new_state)
        results[recompute] = (value, dx, dw) + tuple(jax.tree_util.tree_leaves(new_state))
    for kept, again in zip(results[False], results[True]):
        assert kept.shape == again.shape and kept.dtype == again.dtype
        np.testing.assert_array_equal(_bits(again), _bits(kept))
    assert float(jnp.max(jnp.abs(results[True][2].astype(jnp.float32)))) > 0


def _residuals(recipe, recompute, x, w):
    """(shape, dtype name) of every non-empty array the VJP keeps for the backward pass."""
    _, vjp = jax.vjp(lambda x, w: fj.fp8_dot_general(
        x, w, recipe=recipe, recompute_weight_transpose=recompute), x, w)
    return sorted((leaf.shape, jnp.dtype(leaf.dtype).name)
                  for leaf in jax.tree_util.tree_leaves(vjp) if leaf.size > 0)


@pytest.mark.parametrize("quantization", ["xla", "kernel"])
def test_the_backward_keeps_the_weight_itself_and_no_fp8_copy_of_it(quantization):
    x, w = random((256, 512), 0, jnp.bfloat16), random((512, 128), 1, jnp.bfloat16)
    recipe = fj.Recipe.seed(quantization=quantization)
    # Kept: Xᵀ and Wᵀ in FP8 with their tensor scales. Again: Xᵀ with its scale, and w itself
    # (the parameter, alive anyway), its scale recomputed from it.
    assert _residuals(recipe, False, x, w) == [
        ((), "float32"), ((), "float32"), ((512, 128), "float8_e4m3fn"),
        ((512, 256), "float8_e4m3fn")]
    assert _residuals(recipe, True, x, w) == [
        ((), "float32"), ((512, 128), "bfloat16"), ((512, 256), "float8_e4m3fn")]
    # Delayed scaling keeps the forward's cast scale of W (and its state), never a copy of W.
    delayed = fj.Recipe.seed(scaling="delayed", quantization=quantization)
    state = fj.init_delayed_state(8)
    _, vjp = jax.vjp(lambda x, w: fj.fp8_dot_general(
        x, w, recipe=delayed, state=state, recompute_weight_transpose=True), x, w)
    kept = [(leaf.shape, jnp.dtype(leaf.dtype).name)
            for leaf in jax.tree_util.tree_leaves(vjp) if leaf.size > 0]
    assert ((512, 128), "float8_e4m3fn") not in kept and ((512, 128), "bfloat16") in kept


@pytest.mark.parametrize("recipe_name", ["seed-tensorwise", "seed-delayed"])
def test_an_input_without_rows_gives_what_keeping_the_transpose_gives(recipe_name):
    """An MoE expert that got no tokens: the same empty output, zero gradients and state."""
    recipe = RECIPES[recipe_name]("kernel")
    x, w = jnp.zeros((0, 256), jnp.bfloat16), random((256, 128), 3, jnp.bfloat16)
    state = fj.init_delayed_state(4) if recipe.scaling == "delayed" else None

    def step(recompute):
        def loss(x, w, state):
            y = fj.fp8_dot_general(x, w, recipe=recipe, state=state,
                                   recompute_weight_transpose=recompute)
            return jnp.sum(y.astype(jnp.float32))
        return jax.tree_util.tree_leaves(
            jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))(x, w, state))

    kept, again = step(False), step(True)
    for a, b in zip(kept, again, strict=True):
        np.testing.assert_array_equal(_bits(b), _bits(a))
    assert again[2].shape == w.shape and not np.any(np.asarray(again[2], np.float32))


def test_a_weight_whose_flattening_copies_it_is_refused():
    """w [K1, N, K2] contracted over K1 and K2: flattening it writes a transposed copy of w in
    its own dtype, which the backward would keep: more than the FP8 copy the option saves."""
    x, w = random((8, 4, 6), 0), random((4, 16, 6), 1)
    dims = (((1, 2), (0, 2)), ((), ()))
    with pytest.raises(ValueError, match=r"interleave with its other dims, shape \(4, 16, 6\)"):
        fj.fp8_dot_general(x, w, dims, recompute_weight_transpose=True)
    assert fj.fp8_dot_general(x, w, dims).shape == (8, 16)  # keeping the transpose: fine


@gpu
@pytest.mark.parametrize("quantization", ["xla", "kernel"])
def test_a_compiled_stack_of_layers_holds_less_memory_on_the_gpu(quantization):
    """Six [K, N] layers' step (forward through all, then the gradients) compiled for the GPU:
    casting Wᵀ again in the backward leaves XLA fewer temporary bytes. Not by all six layers'
    FP8 weights: XLA keeps the forward's Wᵀ partly in the output buffers of gradients not yet
    written (H200, 2026-12-06: 5,055,760 -> 1,978,640 bytes with jax.numpy's quantisation,
    1,252,612 -> 730,628 with the kernel's, of 6 MiB of Wᵀ). (XLA's CPU compiler drops the
    optimization barrier that holds the cast in the backward before it schedules: on the CPU the
    cast may run early and save nothing.)"""
    layers, width, rows = 6, 1024, 64
    recipe = fj.Recipe.seed(quantization=quantization)
    on = _gpu_device()
    x = jax.device_put(random((rows, width), 2, jnp.bfloat16), on)
    ws = [jax.device_put(random((width, width), 10 + i, jnp.bfloat16, scale=0.05), on)
          for i in range(layers)]

    def temp_bytes(recompute):
        def loss(ws, x):
            for w in ws:  # tanh, and a square in the loss: the backward needs the forward
                x = jnp.tanh(fj.fp8_dot_general(x, w, recipe=recipe,
                                                recompute_weight_transpose=recompute))
            return jnp.sum(jnp.square(x.astype(jnp.float32)))
        compiled = jax.jit(jax.grad(loss)).lower(ws, x).compile()
        return compiled.memory_analysis().temp_size_in_bytes

    kept, again = temp_bytes(False), temp_bytes(True)
    print(f"temporary bytes: {kept} keeping Wᵀ, {again} casting it again")
    assert again < kept, (kept, again)


def test_flax_dense_with_the_option_trains_as_without_it():
    """nn.Dense with fp8dot.flax.DotGeneral (Flax's delayed recipe): two steps' gradients and
    '_overwrite_with_gradient' state the same bit for bit with the option."""
    import flax.linen as nn

    x = random((48, 160), 5, jnp.bfloat16)

    def dense(recompute):
        return nn.Dense(96, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16,
                        dot_general_cls=functools.partial(
                            ffl.DotGeneral, amax_history_length=8,
                            recompute_weight_transpose=recompute))

    def run(recompute):
        model = dense(recompute)
        variables = model.init(jax.random.PRNGKey(0), x)

        @jax.jit
        def grads(variables, x):
            return jax.grad(lambda v: jnp.sum(jnp.square(model.apply(v, x).astype(
                jnp.float32))))(variables)
        first = grads(variables, x)
        variables = {"params": variables["params"],
                     ffl.OVERWRITE_WITH_GRADIENT: first[ffl.OVERWRITE_WITH_GRADIENT]}
        return jax.tree_util.tree_leaves(first) + jax.tree_util.tree_leaves(
            grads(variables, x * 3))

    for kept, again in zip(run(False), run(True), strict=True):
        np.testing.assert_array_equal(_bits(again), _bits(kept))
