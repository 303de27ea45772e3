"""Trains the byte-level GPT of train.py in JAX/Flax, with bf16, Flax's FP8 or fp8dot's FP8 Dense.

The same run as train.py (the corpus, its batches, the model, AdamW, the schedule, the log), so
the two frameworks and their FP8 paths can be compared with plot.py:

    python examples/train/train_flax.py --config tiny --device cpu          # CI smoke run
    python examples/train/train_flax.py --config h200-300m --linear fp8dot --recipe seed \
        --log runs/jax-fp8dot-seed.jsonl

--linear picks the dot_general_cls of the blocks' Dense projections (the embeddings and the LM
head stay high precision, as in train.py): bf16 (plain nn.Dense), flax-fp8 (Flax's
Fp8DirectDotGeneralOp: XLA's own FP8 GEMMs) or fp8dot (fp8dot.flax.DotGeneral: fp8dot's GEMMs
as XLA custom calls). --linear fp8dot without --recipe is DotGeneral's default, Flax's recipe
(delayed scaling over a 1024-step amax history, the seed's precisions); --recipe picks one of
train.py's recipes (its delayed keeps fp8dot's 16-step history).

Precision as train.py's bf16 autocast: fp32 parameters, gradients and AdamW state; the Dense
layers compute in bf16 (Flax's FP8 paths quantise from that bf16 copy of the weight). The whole
step is one jax.jit; the delayed-scaling state lives in the '_overwrite_with_gradient' collection,
which flax.training.train_state.TrainState replaces with its "gradient" (the updated state).

The batches are train.py's: corpus.py draws them with torch's generator from the same seed, so
both frameworks see the same bytes in the same order (torch is needed for that, on the CPU).
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
from pathlib import Path

import flax
import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch
from flax.training.train_state import TrainState

from configs import HYPERPARAMETERS, add_config_flags, fill_from_config
from corpus import VOCAB_SIZE, evaluation_batches, load_corpus, random_batch
from gpt import GPTConfig
from gpt_flax import GPT, parameter_counts
from linears import FP8DOT_RECIPES, fp8dot_recipe
from optim import BETAS, EPS, lr_at
from runlog import RunLog

LINEARS = ("bf16", "flax-fp8", "fp8dot")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_config_flags(parser)
    parser.add_argument("--linear", choices=LINEARS, default="bf16",
                        help="the blocks' Dense projections (embeddings and LM head stay bf16)")
    parser.add_argument("--recipe", choices=sorted(FP8DOT_RECIPES),
                        help="fp8dot recipe (with --linear fp8dot; default: DotGeneral's, Flax's)")
    parser.add_argument("--recompute-weight-transpose", action="store_true",
                        help="with --linear fp8dot: each Dense quantises its kernel's dgrad "
                             "operand again in the backward instead of keeping it from the "
                             "forward (fp8dot.flax.DotGeneral)")
    parser.add_argument("--device", choices=("cpu", "cuda"), help="default: JAX's default backend")
    parser.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16",
                        help="the Dense layers' compute dtype (parameters are fp32 either way)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-stdlib-tests", action="store_true",
                        help="leave the standard library's test suite out of the corpus")
    parser.add_argument("--log", type=Path, help="write one JSON line per step and evaluation")
    args = parser.parse_args(argv)
    if args.recipe is not None and args.linear != "fp8dot":
        parser.error("--recipe applies to --linear fp8dot only")
    if args.recompute_weight_transpose and args.linear != "fp8dot":
        parser.error("--recompute-weight-transpose applies to --linear fp8dot only")
    fill_from_config(args)
    return args


def block_dot_general(linear: str, recipe: str | None, recompute_weight_transpose: bool = False):
    """The blocks' Dense dot_general_cls for --linear/--recipe (and
    --recompute-weight-transpose), and what it runs, in words. The FP8 libraries are imported
    only when asked for: a bf16 run needs neither."""
    if linear == "bf16":
        return None, "bf16: flax.linen.Dense everywhere (bf16 compute, fp32 parameters)"
    if linear == "flax-fp8":
        from flax.linen import fp8_ops

        return fp8_ops.Fp8DirectDotGeneralOp, (
            "flax-fp8: flax.linen.fp8_ops.Fp8DirectDotGeneralOp (delayed scaling, 1024-step amax "
            "history; e4m3 forward at DEFAULT, e5m2 gradients at HIGHEST; XLA's GEMMs)")
    import fp8dot.flax
    import fp8dot.jax as fj

    again = (" (the kernel's dgrad operand cast again in the backward)"
             if recompute_weight_transpose else "")
    dot_general = functools.partial(fp8dot.flax.DotGeneral,
                                    recompute_weight_transpose=recompute_weight_transpose)
    if recipe is None:
        default = fp8dot.flax.DotGeneral().resolved_recipe()
        return dot_general, (
            f"fp8dot.flax.DotGeneral, its default recipe (Flax's, "
            f"{default.amax_history_length}-step amax history): {default.describe()}{again}")
    chosen = fp8dot_recipe(fj.Recipe, recipe)
    return functools.partial(dot_general, recipe=chosen), (
        f"fp8dot recipe {recipe!r} ({FP8DOT_RECIPES[recipe][2]}): {chosen.describe()}{again}")


def make_model(args: argparse.Namespace) -> tuple[GPT, str]:
    """The GPT of the run's config, and what its blocks' projections run, in words."""
    config = GPTConfig(VOCAB_SIZE, args.seq_len, args.d_model, args.layers, args.heads, args.mlp)
    dot_general_cls, description = block_dot_general(args.linear, args.recipe,
                                                     args.recompute_weight_transpose)
    compute_dtype = jnp.bfloat16 if args.dtype == "bf16" else jnp.float32
    return GPT(config, compute_dtype, dot_general_cls), description


def make_optimizer(args: argparse.Namespace) -> optax.GradientTransformation:
    """optim.py's AdamW for optax: clipping by the global norm, then AdamW with weight decay on
    the matrices only, at lr_at's rate. optax counts updates from 0, so update n (step n + 1)
    reads entry n of the schedule's table."""
    # A numpy table, a constant of the jitted step (not a tracer of the jit that creates the
    # state, whose optimizer this closure belongs to).
    table = np.asarray([lr_at(step, peak_lr=args.lr, warmup_steps=args.warmup,
                              total_steps=args.steps, min_lr_ratio=args.min_lr_ratio)
                        for step in range(1, args.steps + 1)], np.float32)
    schedule = lambda count: jnp.asarray(table)[jnp.minimum(count, args.steps - 1)]
    matrices = lambda params: jax.tree.map(lambda p: p.ndim >= 2, params)
    return optax.chain(
        optax.clip_by_global_norm(args.grad_clip),
        optax.adamw(schedule, b1=BETAS[0], b2=BETAS[1], eps=EPS, weight_decay=args.weight_decay,
                    mask=matrices))


def create_state(model: GPT, args: argparse.Namespace, tokens, targets) -> TrainState:
    """The initialised parameters (and FP8 state, if any) with the optimizer's state."""
    variables = model.init(jax.random.PRNGKey(args.seed), tokens, targets)
    return TrainState.create(apply_fn=model.apply, params=variables, tx=make_optimizer(args))


def train_step(state: TrainState, tokens, targets):
    """One step; jitted whole. grad_norm is before clipping, as train.py logs it."""
    loss, grads = jax.value_and_grad(
        lambda variables: state.apply_fn(variables, tokens, targets))(state.params)
    grad_norm = optax.tree.norm(grads["params"])  # not the FP8 state's "gradient"
    return state.apply_gradients(grads=grads), loss, grad_norm


def fp8_gemms(step, *args) -> tuple[dict, str]:
    """The FP8 GEMMs in the jitted step's program (fp8dot.jax.gemms): counts per engine and
    accumulation ({"fp8dot": {"fp8-fast": 10, "fp8-promoted": 20}}), and one line per GEMM."""
    import fp8dot.jax as fj

    found = fj.gemms(step, *args)
    counts = collections.defaultdict(collections.Counter)
    for gemm in found:
        counts[gemm.engine][gemm.accumulation] += 1
    lines = "\n".join(f"{i}: {gemm}" for i, gemm in enumerate(found)) or "no FP8 GEMM"
    return {engine: dict(by_accumulation) for engine, by_accumulation in counts.items()}, lines


def as_jax(batch: tuple[torch.Tensor, torch.Tensor]):
    return tuple(jnp.asarray(t.to(torch.int32).numpy()) for t in batch)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.device is not None:
        jax.config.update("jax_platforms", args.device)
    device = jax.devices()[0]
    # train.py's batch generator and seed: the same bytes in the same order.
    batch_generator = torch.Generator().manual_seed(args.seed + 1)

    corpus = load_corpus(with_tests=not args.no_stdlib_tests)
    print(corpus.describe())
    eval_batches = [as_jax(b) for b in evaluation_batches(
        corpus.validation, args.batch_size, args.seq_len, args.eval_batches)]

    model, linear_description = make_model(args)
    state = jax.jit(functools.partial(create_state, model, args))(*eval_batches[0])
    counts = parameter_counts(state.params["params"])
    print(f"model: {model.config}, MLP hidden {model.config.mlp_hidden}")
    print("parameters: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    gemm_counts = None
    if args.linear != "bf16":
        gemm_counts, gemm_lines = fp8_gemms(train_step, state, *eval_batches[0])
        linear_description += "\n" + gemm_lines
    print(linear_description)
    step_fn = jax.jit(train_step, donate_argnums=0)
    loss_fn = jax.jit(model.apply)

    tokens_per_step = args.batch_size * args.seq_len
    label = args.linear + (f"-{args.recipe}" if args.recipe else "")
    log = RunLog(args.log, args.steps, tokens_per_step)
    log.record(
        type="run", framework="jax", label=label, **{k: getattr(args, k) for k in HYPERPARAMETERS},
        linear=args.linear, recipe=args.recipe, dtype=args.dtype,
        recompute_weight_transpose=args.recompute_weight_transpose,
        compile=True,  # jax.jit, always
        seed=args.seed, device=device.platform, device_name=device.device_kind,
        torch_version=torch.__version__,  # the batches' generator
        jax_version=jax.__version__, flax_version=flax.__version__, optax_version=optax.__version__,
        python_version=corpus.python_version, corpus_sha256=corpus.sha256,
        corpus_train_bytes=len(corpus.train), corpus_validation_bytes=len(corpus.validation),
        parameters=counts, linear_description=linear_description, fp8_gemms=gemm_counts,
        argv=sys.argv if argv is None else argv,
    )

    def evaluate(step: int) -> float:
        """The mean loss over the fixed validation windows (every batch the same size)."""
        total = sum(loss_fn(state.params, *batch) for batch in eval_batches)
        loss = float(total) / len(eval_batches)
        log.evaluation(step, loss)
        return loss

    val_loss = evaluate(0)
    started = time.perf_counter()
    for step in range(1, args.steps + 1):
        step_start = time.perf_counter()
        lr = lr_at(step, peak_lr=args.lr, warmup_steps=args.warmup, total_steps=args.steps,
                   min_lr_ratio=args.min_lr_ratio)  # the schedule's table holds the same value
        tokens, targets = as_jax(random_batch(corpus.train, args.batch_size, args.seq_len,
                                              batch_generator))
        state, loss, grad_norm = step_fn(state, tokens, targets)
        loss_value, grad_norm_value = float(loss), float(grad_norm)  # waits for the device
        seconds = time.perf_counter() - step_start

        if not log.train_step(step, loss_value, lr, grad_norm_value, seconds):
            break
        if step % args.eval_every == 0 or step == args.steps:
            val_loss = evaluate(step)

    memory = device.memory_stats() or {}  # None on the CPU
    summary = log.summary(
        label=label, linear=args.linear, recipe=args.recipe, val_loss=val_loss,
        train_seconds=time.perf_counter() - started, counts=counts,
        peak_memory_bytes=memory.get("peak_bytes_in_use"),
    )
    return log.finish(summary, "XLA's peak_bytes_in_use")


if __name__ == "__main__":
    main()
