"""What autograd keeps from a forward for its backward, counted for the memory tests."""

import torch
from torch import nn

FP8_DTYPES = (torch.float8_e4m3fn, torch.float8_e5m2)


def fp8_bytes_kept_for_the_backward(module: nn.Module, x: torch.Tensor) -> int:
    """The bytes of the FP8 tensors autograd keeps from `module(x)` for its backward."""
    kept = []

    def pack(tensor):
        kept.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        module(x)
    return sum(t.numel() * t.element_size() for t in kept if t.dtype in FP8_DTYPES)
