"""AdamW and its learning-rate schedule: linear warm-up, then cosine decay to a floor."""

from __future__ import annotations

import math

import torch
from torch import nn

# AdamW's betas and epsilon in both frameworks (train_flax.py's optax.adamw takes them too):
# betas (0.9, 0.95) as GPT-3 and most LLM recipes since.
BETAS = (0.9, 0.95)
EPS = 1e-8


def make_adamw(model: nn.Module, lr: float, weight_decay: float, fused: bool) -> torch.optim.AdamW:
    """AdamW with weight decay on the matrices (projections, embeddings, LM head) only: decaying
    the RMSNorm gains towards zero would fight the normalisation they exist to undo.
    betas (0.9, 0.95) as GPT-3 and most LLM recipes since. `fused` (one kernel for all
    parameters) on CUDA only; it is the same update, just fewer launches."""
    matrices = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [
        {"params": matrices, "weight_decay": weight_decay},
        {"params": vectors, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr, betas=BETAS, eps=EPS, fused=fused or None)


def lr_at(step: int, *, peak_lr: float, warmup_steps: int, total_steps: int, min_lr_ratio: float) -> float:
    """The learning rate of step `step` (1-based): rises linearly from peak/warmup to peak over
    the first `warmup_steps` steps, then follows half a cosine down to peak·min_lr_ratio at
    the last step."""
    if step <= warmup_steps:
        return peak_lr * step / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    cosine = 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
    return peak_lr * (min_lr_ratio + (1.0 - min_lr_ratio) * cosine)


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
