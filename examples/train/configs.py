"""Named run configurations. Any command-line flag overrides its config's value (the same flags
in train.py and train_flax.py)."""

from __future__ import annotations

import argparse

CONFIGS = {
    # The CI run: the CPU, two cores, well under a minute. Big enough for the loss to fall
    # clearly (5.6 nats -> about 3.2 in 30 steps), small enough to be a smoke test.
    "tiny": dict(
        d_model=64, layers=2, heads=4, mlp="swiglu", seq_len=64,
        batch_size=8, steps=30, lr=3e-3, warmup=5, min_lr_ratio=0.1, weight_decay=0.1,
        grad_clip=1.0, eval_every=10, eval_batches=4,
    ),
    # The H200 comparison (issue #10 item 4). 6 blocks of d_model 2048 (16 heads of 128,
    # SwiGLU hidden 5504 = 43x128) hold 303,587,328 parameters, 308,832,256 with embeddings
    # and head. Shallow and wide on purpose: the GEMMs FP8 accelerates are d_model-sized, and
    # the issue asks for d_model >= 2048 at about 300M parameters. 8 x 2048 tokens per step
    # (each GEMM sees M = 16,384 rows), 2,000 steps = 32.8M tokens, about 1.1 epochs of the
    # 3.12 corpus with its tests.
    "h200-300m": dict(
        d_model=2048, layers=6, heads=16, mlp="swiglu", seq_len=2048,
        batch_size=8, steps=2000, lr=3e-4, warmup=200, min_lr_ratio=0.1, weight_decay=0.1,
        grad_clip=1.0, eval_every=100, eval_batches=20,
    ),
}

# The hyperparameters a config sets and a flag may override: name -> type.
HYPERPARAMETERS = {
    "d_model": int, "layers": int, "heads": int, "mlp": str, "seq_len": int,
    "batch_size": int, "steps": int, "lr": float, "warmup": int, "min_lr_ratio": float,
    "weight_decay": float, "grad_clip": float, "eval_every": int, "eval_batches": int,
}


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """--config and one flag per hyperparameter (--d-model, --mlp, ...)."""
    parser.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    for name, kind in HYPERPARAMETERS.items():
        flag = "--" + name.replace("_", "-")
        if name == "mlp":
            parser.add_argument(flag, choices=("swiglu", "gelu"))
        else:
            parser.add_argument(flag, type=kind, help=f"overrides the config's {name}")


def fill_from_config(args: argparse.Namespace) -> None:
    """Sets every hyperparameter not given on the command line to its config's value."""
    for name, value in CONFIGS[args.config].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
