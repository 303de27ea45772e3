#!/usr/bin/env python3
"""Exports FP8 modules from JAX/Flax as HLO text, with XLA's outputs for fixed inputs.

Run on a machine with a GPU and JAX (scripts/gpu-export-jax.sh runs it on the H200):
    python3 examples/jax/export_modules.py OUT_DIR
For each module NAME it writes
    NAME.hlo              jax.jit(f).lower(*args).compiler_ir('hlo').as_hlo_text()
    NAME.optimized.hlo    what XLA compiled it to (shows whether XLA emitted an FP8 GEMM)
    NAME.in<i>.npy        the inputs (FP8 as fp8dot's structured npy, docs/npy-format.md)
    NAME.out<i>.npy       XLA's outputs on the GPU (f32 upcast of each output leaf)
and a summary MANIFEST.json. tests/hlo/jax_examples_test.cc checks that fp8dot reproduces the
outputs. Every module is exported independently: a failure is recorded and the rest go on.
"""
import json
import os
import sys
import traceback

import numpy as np
import jax
import jax.numpy as jnp
import ml_dtypes

OUT = sys.argv[1] if len(sys.argv) > 1 else "examples/jax"
os.makedirs(OUT, exist_ok=True)
E4M3, E5M2 = jnp.float8_e4m3fn, jnp.float8_e5m2
STRUCTURED = {np.dtype(ml_dtypes.float8_e4m3fn): "float8_e4m3fn",
              np.dtype(ml_dtypes.float8_e5m2): "float8_e5m2",
              np.dtype(ml_dtypes.bfloat16): "bfloat16"}
manifest = {"jax": jax.__version__, "device": str(jax.devices()[0]), "modules": {}}


def save(path, array):
    array = np.asarray(array)
    name = STRUCTURED.get(array.dtype)
    if name is not None:  # fp8dot's self-describing form for types numpy lacks
        raw = np.ascontiguousarray(array).view(np.uint8 if array.itemsize == 1 else np.uint16)
        array = raw.view(np.dtype([(name, raw.dtype)]))
    np.save(path, array, allow_pickle=False)


def export(name, fn, *args):
    entry = {}
    try:
        lowered = jax.jit(fn).lower(*args)
        with open(os.path.join(OUT, name + ".hlo"), "w") as f:
            f.write(lowered.compiler_ir("hlo").as_hlo_text())
        compiled = lowered.compile()
        optimized = compiled.as_text()
        with open(os.path.join(OUT, name + ".optimized.hlo"), "w") as f:
            f.write(optimized)
        entry["xla_fp8_gemm"] = "__cublas$lt$matmul$f8" in optimized
        entry["xla_fast_accum"] = '"FAST_ACCUM"' in optimized or "fast_accum" in optimized.lower()
        outputs = jax.tree_util.tree_leaves(compiled(*args))
        for i, a in enumerate(args):
            save(os.path.join(OUT, f"{name}.in{i}.npy"), a)
        for i, o in enumerate(outputs):
            save(os.path.join(OUT, f"{name}.out{i}.npy"), np.asarray(o))
        entry["inputs"] = [f"{a.dtype}{list(a.shape)}" for a in args]
        entry["outputs"] = [f"{o.dtype}{list(o.shape)}" for o in outputs]
        print(f"{name}: ok, XLA FP8 GEMM: {entry['xla_fp8_gemm']}", flush=True)
    except Exception as error:  # record and go on
        entry["error"] = f"{type(error).__name__}: {error}"
        traceback.print_exc()
        print(f"{name}: FAILED {entry['error']}", flush=True)
    manifest["modules"][name] = entry


key = jax.random.PRNGKey(0)
k1, k2, k3 = jax.random.split(key, 3)
M, K, N = 64, 256, 128
a = (jax.random.uniform(k1, (M, K), minval=-4, maxval=4)).astype(E4M3)
b = (jax.random.uniform(k2, (K, N), minval=-4, maxval=4)).astype(E4M3)
g = (jax.random.uniform(k3, (M, N), minval=-4, maxval=4)).astype(E5M2)
sa, sb = jnp.float32(0.5), jnp.float32(1.5)


def scaled_dot(dtype, precision):
    def f(x, y, x_scale, y_scale):
        xd = x.astype(dtype) * x_scale.astype(dtype)
        yd = y.astype(dtype) * y_scale.astype(dtype)
        return jnp.dot(xd, yd, precision=precision, preferred_element_type=dtype)
    return f


export("scaled_dot_f32_default", scaled_dot(jnp.float32, jax.lax.Precision.DEFAULT), a, b, sa, sb)
export("scaled_dot_f32_highest", scaled_dot(jnp.float32, jax.lax.Precision.HIGHEST), a, b, sa, sb)
export("scaled_dot_bf16_default", scaled_dot(jnp.bfloat16, jax.lax.Precision.DEFAULT), a, b, sa, sb)


def quantised_output(x, y, x_scale, y_scale, out_scale):
    d = scaled_dot(jnp.float32, jax.lax.Precision.DEFAULT)(x, y, x_scale, y_scale)
    amax = jnp.max(jnp.abs(d))
    q = jnp.clip(d / out_scale, -448.0, 448.0).astype(E4M3)
    return q, amax


export("scaled_dot_fp8_output", quantised_output, a, b, sa, sb, jnp.float32(4.0))

for preset in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
    algorithm = getattr(jax.lax.DotAlgorithmPreset, preset)
    export(f"dot_algorithm_{preset.lower()}",
           lambda x, y, algorithm=algorithm: jax.lax.dot_general(
               x, y, (((1,), (0,)), ((), ())), precision=algorithm,
               preferred_element_type=jnp.float32),
           a, b)

export("direct_fp8_dot_general",
       lambda x, y: jax.lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                        preferred_element_type=jnp.float32), a, b)


# The seed discussion's dot_precise_grad: forward DEFAULT, tangents HIGHEST.
@jax.custom_jvp
def dot_precise_grad(x, y):
    return jnp.dot(x, y, precision=jax.lax.Precision.DEFAULT, preferred_element_type=jnp.float32)


@dot_precise_grad.defjvp
def dot_precise_grad_jvp(primals, tangents):
    def dot_precise(x, y):
        return jnp.dot(x, y, precision=jax.lax.Precision.HIGHEST,
                       preferred_element_type=jnp.float32)
    _, jvp = jax.jvp(dot_precise, primals, tangents)
    return dot_precise_grad(*primals), jvp


def fp8_train_loss(x, w, x_scale, w_scale):
    xq = (x / x_scale).clip(-448, 448).astype(E4M3).astype(jnp.float32) * x_scale
    wq = (w / w_scale).clip(-448, 448).astype(E4M3).astype(jnp.float32) * w_scale
    return jnp.sum(dot_precise_grad(xq, wq) ** 2) / x.shape[0]


x32 = jax.random.normal(k1, (M, K), jnp.float32)
w32 = jax.random.normal(k2, (K, N), jnp.float32) * 0.05
export("fp8_dot_forward", lambda x, w, s1, s2: dot_precise_grad(
    (x / s1).astype(E4M3).astype(jnp.float32) * s1, (w / s2).astype(E4M3).astype(jnp.float32) * s2),
    x32, w32, jnp.float32(0.05), jnp.float32(0.001))
export("fp8_dot_grad", jax.grad(fp8_train_loss, argnums=(0, 1)), x32, w32, jnp.float32(0.05),
       jnp.float32(0.001))

# Flax's FP8 layer (fp8_ops.Fp8DotGeneralOp): forward and jax.grad.
try:
    import flax.linen as nn
    from flax.linen import fp8_ops

    class Fp8Mlp(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Dense(256, dot_general_cls=fp8_ops.Fp8DotGeneralOp)(x)
            x = nn.relu(x)
            return nn.Dense(128, dot_general_cls=fp8_ops.Fp8DotGeneralOp)(x)

    model = Fp8Mlp()
    xs = jax.random.normal(k3, (32, 128), jnp.float32)
    params = model.init(k1, xs)

    def mlp_forward(params, x):
        return model.apply(params, x)

    def mlp_loss(params, x):
        return jnp.mean(model.apply(params, x) ** 2)

    leaves, treedef = jax.tree_util.tree_flatten(params)
    export("flax_fp8_mlp_forward",
           lambda x, *leaves: mlp_forward(jax.tree_util.tree_unflatten(treedef, leaves), x),
           xs, *leaves)
    export("flax_fp8_mlp_grad",
           lambda x, *leaves: jax.grad(mlp_loss)(jax.tree_util.tree_unflatten(treedef, leaves), x),
           xs, *leaves)
except Exception as error:
    manifest["modules"]["flax_fp8_mlp"] = {"error": f"{type(error).__name__}: {error}"}
    traceback.print_exc()

with open(os.path.join(OUT, "MANIFEST.json"), "w") as f:
    json.dump(manifest, f, indent=1, sort_keys=True)
print(json.dumps({k: ("ok" if "error" not in v else v["error"][:80])
                  for k, v in manifest["modules"].items()}, indent=1))
