"""A GPT-style decoder: pre-norm RMSNorm, causal attention through SDPA, a SwiGLU or GELU MLP.

Every projection inside a block is a plain `nn.Linear` without bias, so an FP8 library can swap
them (fp8dot.torch.convert, torchao's convert_to_float8_training) and nothing else changes.
The token embedding, the position embedding and the LM head stay in high precision (bf16 under
autocast), as Transformer Engine and torchao recommend: the embeddings are lookups, not GEMMs,
and the LM head's logits feed the softmax directly, where FP8's 3-bit mantissa costs the most
and its share of the FLOPs (vocab 256 here) saves the least.
"""

from __future__ import annotations

import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    seq_len: int
    d_model: int
    layers: int
    heads: int
    mlp: str = "swiglu"  # or "gelu"

    @property
    def mlp_hidden(self) -> int:
        """SwiGLU has three matrices instead of GELU's two, so its hidden width is 2/3 of 4·d
        to keep the FLOPs equal (as in LLaMA), rounded up to a multiple of 128 so every FP8
        scaling (DeepSeek's 1x128 blocks included) tiles it without padding."""
        if self.mlp == "gelu":
            return 4 * self.d_model
        return 128 * math.ceil(8 * self.d_model / 3 / 128)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        if config.d_model % config.heads:
            raise ValueError(f"d_model {config.d_model} is not a multiple of heads {config.heads}")
        self.heads = config.heads
        # One GEMM for q, k and v together: one read of x, and one FP8 quantisation of it.
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.out = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, d_model = x.shape
        q, k, v = self.qkv(x).split(d_model, dim=2)
        # (batch, seq, d_model) -> (batch, heads, seq, head_dim), the layout SDPA expects.
        q, k, v = (t.view(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(batch, seq, d_model))


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.kind = config.mlp
        hidden = config.mlp_hidden
        if self.kind == "swiglu":
            self.gate = nn.Linear(config.d_model, hidden, bias=False)
        elif self.kind != "gelu":
            raise ValueError(f"unknown MLP {self.kind!r}; expected 'swiglu' or 'gelu'")
        self.up = nn.Linear(config.d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, config.d_model, bias=False)
        # A down projection that can take the SwiGLU product fused (fp8dot.torch.Linear.swiglu:
        # quantised inside its FP8 cast, never written in bf16) gets it that way when this is
        # on (train.py --fused-swiglu). Off by default: faster as a kernel, but not in the
        # compiled model (docs/training.md).
        self.fused_swiglu = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "swiglu":
            if self.fused_swiglu and hasattr(self.down, "swiglu"):
                return self.down.swiglu(self.gate(x), self.up(x))
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    """Pre-norm residual block: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.attn_norm = nn.RMSNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.mlp_norm = nn.RMSNorm(config.d_model)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class GPT(nn.Module):
    """Embeddings are untied from the LM head. With a byte vocabulary (256) tying saves only
    256·d_model parameters (0.5M of 300M), and untied, the LM head is its own nn.Linear whose
    precision is decided alone; tied, the embedding table would be the LM head's weight."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        # Learned absolute positions (as GPT-2): no extra code in the attention, and the
        # sequence length is fixed per run anyway.
        self.position_embedding = nn.Embedding(config.seq_len, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.final_norm = nn.RMSNorm(config.d_model)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self._init_weights()

    def _init_weights(self) -> None:
        # GPT-2's initialisation: N(0, 0.02) everywhere, and the projections that write into
        # the residual stream scaled by 1/sqrt(2·layers) so its variance does not grow with
        # depth. Norm weights keep their default (ones).
        for name, parameter in self.named_parameters():
            if parameter.dim() < 2:
                continue
            std = 0.02
            if name.endswith(("attn.out.weight", "mlp.down.weight")):
                std /= math.sqrt(2 * self.config.layers)
            nn.init.normal_(parameter, mean=0.0, std=std)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The mean next-byte cross-entropy (in nats) of `targets` given `tokens`."""
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.final_norm(x))
        # The loss in fp32 whatever the logits' dtype: the softmax over 256 classes is cheap.
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))


def is_block_projection(fqn: str, module: nn.Module) -> bool:
    """The layers an FP8 recipe may swap: the nn.Linear projections inside the blocks (q/k/v,
    attention output, MLP). Not the LM head (see the module docstring)."""
    return isinstance(module, nn.Linear) and fqn.startswith("blocks.")


def parameter_counts(model: GPT) -> dict[str, int]:
    """Parameters by role: the blocks' projections (what FP8 swaps), the rest of the blocks
    (norms), the embeddings, the LM head, and the total."""
    return counts_by_role({name: p.numel() for name, p in model.named_parameters()})


def counts_by_role(sizes: dict[str, int]) -> dict[str, int]:
    """parameter_counts from {parameter name: element count}, the names dotted as this model's
    ("blocks.0.attn.qkv.weight"): gpt_flax.py counts its parameters here too, so both frameworks
    report the same roles."""
    counts = {"block_projections": 0, "block_norms": 0, "embeddings": 0, "lm_head": 0, "final_norm": 0}
    for name, size in sizes.items():
        if name.startswith("blocks."):
            key = "block_norms" if "norm" in name else "block_projections"
        elif "embedding" in name:
            key = "embeddings"
        elif name.startswith("lm_head"):
            key = "lm_head"
        else:
            key = "final_norm"
        counts[key] += size
    counts["blocks"] = counts["block_projections"] + counts["block_norms"]
    counts["total"] = sum(sizes.values())
    return counts
