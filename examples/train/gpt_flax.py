"""gpt.py's GPT in Flax linen, for train_flax.py: the same architecture, initialisation and
parameter names, so one config has the same parameter counts in both frameworks.

Pre-norm RMSNorm, causal attention (jax.nn.dot_product_attention), a SwiGLU or GELU MLP, learned
positions, untied embeddings. Every projection inside a block is an nn.Dense without bias whose
dot_general_cls is the model's `dot_general_cls`: None for plain nn.Dense (bf16), Flax's
Fp8DirectDotGeneralOp, or fp8dot.flax.DotGeneral. The embeddings and the LM head stay in high
precision, as in gpt.py (its docstring says why).

Precision as torch's bf16 autocast: fp32 parameters (the master weights), the projections and the
LM head computed in `compute_dtype` (bf16), the residual stream, the norms and the loss in fp32.
"""

from __future__ import annotations

import math
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax import traverse_util

from gpt import GPTConfig, counts_by_role

# torch.nn.RMSNorm's default epsilon for fp32 inputs (torch.finfo(torch.float32).eps); Flax's
# default is 1e-6.
RMS_NORM_EPSILON = float(jnp.finfo(jnp.float32).eps)

# GPT-2's initialisation, as gpt.py: N(0, 0.02) for every matrix; the projections that write into
# the residual stream (attention output, MLP down) divide it by sqrt(2·layers).
INIT_STD = 0.02


class Block(nn.Module):
    """Pre-norm residual block: x + attn(norm(x)), then x + mlp(norm(x))."""

    config: GPTConfig
    compute_dtype: Any
    dot_general_cls: Any

    def projection(self, features: int, name: str, residual: bool = False) -> nn.Dense:
        """A projection FP8 may swap (gpt.py's bias-free nn.Linear)."""
        std = INIT_STD / math.sqrt(2 * self.config.layers) if residual else INIT_STD
        return nn.Dense(features, use_bias=False, dtype=self.compute_dtype,
                        param_dtype=jnp.float32, kernel_init=nn.initializers.normal(std),
                        dot_general_cls=self.dot_general_cls, name=name)

    @nn.compact
    def __call__(self, x):
        config = self.config
        if config.d_model % config.heads:
            raise ValueError(f"d_model {config.d_model} is not a multiple of heads {config.heads}")
        batch, seq, d_model = x.shape
        h = nn.RMSNorm(epsilon=RMS_NORM_EPSILON, name="attn_norm")(x)
        # One GEMM for q, k and v together, as gpt.py; (batch, seq, heads, head_dim) is the
        # layout dot_product_attention takes, so no transpose.
        q, k, v = jnp.split(self.projection(3 * d_model, "attn.qkv")(h), 3, axis=-1)
        q, k, v = (t.reshape(batch, seq, config.heads, -1) for t in (q, k, v))
        y = jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(batch, seq, d_model)
        x = x + self.projection(d_model, "attn.out", residual=True)(y)

        h = nn.RMSNorm(epsilon=RMS_NORM_EPSILON, name="mlp_norm")(x)
        hidden = config.mlp_hidden
        if config.mlp == "swiglu":
            gate, up = self.projection(hidden, "mlp.gate"), self.projection(hidden, "mlp.up")
            h = nn.silu(gate(h)) * up(h)
        elif config.mlp == "gelu":
            h = nn.gelu(self.projection(hidden, "mlp.up")(h), approximate=False)  # torch's F.gelu
        else:
            raise ValueError(f"unknown MLP {config.mlp!r}; expected 'swiglu' or 'gelu'")
        return x + self.projection(d_model, "mlp.down", residual=True)(h)


class GPT(nn.Module):
    config: GPTConfig
    compute_dtype: Any = jnp.bfloat16
    dot_general_cls: Any = None  # the blocks' projections only

    @nn.compact
    def __call__(self, tokens, targets):
        """The mean next-byte cross-entropy (in nats) of `targets` given `tokens`."""
        config = self.config
        embed = lambda rows, name: nn.Embed(rows, config.d_model, param_dtype=jnp.float32,
                                            embedding_init=nn.initializers.normal(INIT_STD),
                                            name=name)
        x = (embed(config.vocab_size, "token_embedding")(tokens)
             + embed(config.seq_len, "position_embedding")(jnp.arange(tokens.shape[1])))
        for i in range(config.layers):
            x = Block(config, self.compute_dtype, self.dot_general_cls, name=f"blocks.{i}")(x)
        x = nn.RMSNorm(epsilon=RMS_NORM_EPSILON, name="final_norm")(x)
        logits = nn.Dense(config.vocab_size, use_bias=False, dtype=self.compute_dtype,
                          param_dtype=jnp.float32, kernel_init=nn.initializers.normal(INIT_STD),
                          name="lm_head")(x)
        # The loss in fp32 whatever the logits' dtype, as gpt.py.
        return optax.softmax_cross_entropy_with_integer_labels(
            logits.astype(jnp.float32), targets).mean()


def parameter_counts(params) -> dict[str, int]:
    """gpt.parameter_counts for the Flax parameters (variables["params"])."""
    flat = traverse_util.flatten_dict(params, sep=".")
    return counts_by_role({name: int(value.size) for name, value in flat.items()})
