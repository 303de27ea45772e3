"""fp8dot.torch.Linear: nn.Linear whose three GEMMs run in FP8 through fp8dot.

Every operand is quantised as a "contracting-last" matrix (rows × the GEMM's contracting dim,
row-major), which is the layout Hopper's FP8 tensor cores read (cuBLASLt's TN):

    forward  lhs X [M,K]     rhs W  [N,K]   (W as stored: no copy)
    dgrad    lhs dY [M,N]    rhs Wᵀ [K,N]
    wgrad    lhs dYᵀ [N,M]   rhs Xᵀ [K,M]

and passed to fp8dot's scaled_mm with the rhs as its transpose view. Tensor and 128×128 scales do
not change under transposition, so those operands are quantised once and only transposed (a copy
of FP8 bytes); row and 1×128 scales run along the contracting dim, which differs per GEMM, so
those operands are quantised again from the high-precision tensor (saved for the backward pass).
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from . import ops  # noqa: F401  (registers torch.ops.fp8dot)
from .quantize import quantize_blocks, quantize_rowwise, quantize_tensorwise, scale_from_amax
from .recipe import GemmConfig, Recipe

# Rows of a delayed-scaling layer's amax history.
_INPUT, _WEIGHT, _GRAD_OUTPUT = 0, 1, 2


def _granularity(recipe: Recipe, role: str) -> str:
    """'tensor', 'row', '1x128' or '128x128' for an operand role ('activation', 'weight',
    'gradient') under a recipe's scaling."""
    if recipe.scaling in ("tensorwise", "delayed"):
        return "tensor"
    if recipe.scaling == "rowwise":
        return "row"
    return "128x128" if role == "weight" else "1x128"


def _quantize(matrix: torch.Tensor, dtype: torch.dtype, granularity: str,
              scale: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Quantises a contracting-last matrix; the scale comes back in that matrix's terms:
    [] / [rows] / [rows, K/128] / [rows/128, K/128]."""
    if granularity == "tensor":
        return quantize_tensorwise(matrix, dtype, scale)
    if granularity == "row":
        return quantize_rowwise(matrix, dtype, reduce_dim=1)
    if granularity == "1x128":
        return quantize_blocks(matrix, dtype, 1, 128)
    return quantize_blocks(matrix, dtype, 128, 128)


def _transposed(operand: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """A tensor- or 128×128-scaled operand of the other GEMM orientation: the FP8 bytes transposed
    into a row-major copy, the scale transposed as a view."""
    q, scale = operand
    return q.t().contiguous(), _transposed_scale(scale)


def _transposed_scale(scale: torch.Tensor) -> torch.Tensor:
    """A scale in the transposed operand's terms: block scales transpose (as a view), tensor and
    per-row scales stay as they are."""
    return scale.t() if scale.dim() == 2 else scale


def _reoriented(quantised: tuple[torch.Tensor, torch.Tensor], reusable: bool,
                matrix: torch.Tensor, dtype: torch.dtype,
                granularity: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The operand of the other GEMM orientation (matrixᵀ, contracting-last): the quantised one
    transposed where its scale allows (tensor, 128×128, same FP8 type), else matrixᵀ quantised
    afresh along its new contracting dim."""
    if reusable:
        return _transposed(quantised)
    return _quantize(matrix.t().contiguous(), dtype, granularity)


def _gemm(lhs: tuple[torch.Tensor, torch.Tensor], rhs: tuple[torch.Tensor, torch.Tensor],
          config: GemmConfig, out_dtype: torch.dtype, backend: str,
          bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """lhs [M,K] · rhs [N,K]ᵀ with both operands contracting-last."""
    rhs_q, rhs_scale = rhs
    output, _ = torch.ops.fp8dot.scaled_mm(
        lhs[0], rhs_q.t(), lhs[1], _transposed_scale(rhs_scale), bias,
        None, out_dtype, config.precision[0], config.precision[1], False, backend)
    return output


def _delayed_scale(history: torch.Tensor, current_amax: torch.Tensor, recipe: Recipe,
                   dtype: torch.dtype) -> torch.Tensor:
    """The scale delayed scaling uses this step: from the history (before this step's amax is
    recorded); a history that has seen nothing yet (the first step) falls back to current
    scaling rather than guessing."""
    remembered = history.amax() if recipe.amax_compute == "max" else history[0]
    amax = torch.where(remembered > 0, remembered, current_amax.float())
    return scale_from_amax(amax, dtype, recipe.margin)


def _record_amax(history: torch.Tensor, amax: torch.Tensor) -> None:
    """Shifts one row of the history by one step and stores this step's amax in front."""
    history.copy_(torch.cat([amax.float().reshape(1), history[:-1]]))


class _Fp8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                amax_history: Optional[torch.Tensor], recipe: Recipe, out_dtype: torch.dtype):
        backend = recipe.backend
        activation, weight_granularity = _granularity(recipe, "activation"), _granularity(recipe, "weight")
        scale_x = scale_w = None
        if amax_history is not None:
            amax_x, amax_w = x.abs().amax(), weight.abs().amax()
            scale_x = _delayed_scale(amax_history[_INPUT], amax_x, recipe, recipe.forward.lhs_dtype)
            scale_w = _delayed_scale(amax_history[_WEIGHT], amax_w, recipe, recipe.forward.rhs_dtype)
            _record_amax(amax_history[_INPUT], amax_x)
            _record_amax(amax_history[_WEIGHT], amax_w)
        x_q = _quantize(x, recipe.forward.lhs_dtype, activation, scale_x)
        w_q = _quantize(weight, recipe.forward.rhs_dtype, weight_granularity, scale_w)
        bias_for_gemm = None if bias is None else bias.to(out_dtype)
        output = _gemm(x_q, w_q, recipe.forward, out_dtype, backend, bias_for_gemm)

        # What the backward pass needs: FP8 operands where they can be reused transposed, the
        # high-precision tensor where the gradient GEMMs quantise along another dim.
        transposable = activation == "tensor"
        reuse_x = transposable and recipe.wgrad.rhs_dtype == recipe.forward.lhs_dtype
        reuse_w = weight_granularity in ("tensor", "128x128") and \
            recipe.dgrad.rhs_dtype == recipe.forward.rhs_dtype
        ctx.recipe, ctx.reuse_x, ctx.reuse_w = recipe, reuse_x, reuse_w
        ctx.x_dtype, ctx.has_bias = x.dtype, bias is not None
        ctx.bias_dtype = None if bias is None else bias.dtype
        saved_x = x_q if reuse_x else (x, None)
        saved_w = w_q if reuse_w else (weight, None)
        ctx.save_for_backward(saved_x[0], saved_x[1], saved_w[0], saved_w[1], weight, amax_history)
        return output

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        recipe: Recipe = ctx.recipe
        x_saved, x_scale, w_saved, w_scale, weight, amax_history = ctx.saved_tensors
        backend = recipe.backend
        gradient = _granularity(recipe, "gradient")
        dy = grad_output.contiguous()
        scale_dy = None
        if amax_history is not None:
            amax_dy = dy.abs().amax()
            scale_dy = _delayed_scale(amax_history[_GRAD_OUTPUT], amax_dy, recipe,
                                      recipe.dgrad.lhs_dtype)
            _record_amax(amax_history[_GRAD_OUTPUT], amax_dy)

        grad_x = grad_w = grad_bias = None
        dy_q = _quantize(dy, recipe.dgrad.lhs_dtype, gradient, scale_dy)
        if ctx.needs_input_grad[0]:
            w_t = _reoriented((w_saved, w_scale), ctx.reuse_w, w_saved, recipe.dgrad.rhs_dtype,
                              _granularity(recipe, "weight"))
            grad_x = _gemm(dy_q, w_t, recipe.dgrad, ctx.x_dtype, backend)
        if ctx.needs_input_grad[1]:
            reuse_dy = gradient == "tensor" and recipe.wgrad.lhs_dtype == recipe.dgrad.lhs_dtype
            dy_t = _reoriented(dy_q, reuse_dy, dy, recipe.wgrad.lhs_dtype, gradient)
            x_t = _reoriented((x_saved, x_scale), ctx.reuse_x, x_saved, recipe.wgrad.rhs_dtype,
                              _granularity(recipe, "activation"))
            grad_w = _gemm(dy_t, x_t, recipe.wgrad, weight.dtype, backend)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = dy.sum(0).to(ctx.bias_dtype)
        return grad_x, grad_w, grad_bias, None, None, None


class Linear(nn.Linear):
    """A drop-in nn.Linear whose forward and gradient GEMMs run in FP8 with fp8dot.

    The recipe decides each GEMM's formats and PrecisionConfig (by default the seed's rule:
    forward fast, gradients promoted) and the scaling. Parameters stay in their dtype (the
    optimizer's master weights); inputs of any leading shape [..., in_features] are flattened
    into the GEMM's M. Under autocast the output has the autocast dtype, else the input's.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None, *, recipe: Optional[Recipe] = None):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        self._set_recipe(recipe or Recipe.seed())

    def _set_recipe(self, recipe: Recipe) -> None:
        self.recipe = recipe
        if recipe.scaling == "delayed":
            # A buffer, so state_dict() carries it and a resumed run continues bit-identically.
            self.register_buffer("amax_history",
                                 torch.zeros(3, recipe.amax_history_length, dtype=torch.float32,
                                             device=self.weight.device))
        else:
            self.amax_history = None
        self.last_input_shape: Optional[tuple[int, ...]] = None

    @classmethod
    def from_linear(cls, linear: nn.Linear, recipe: Optional[Recipe] = None) -> "Linear":
        """An FP8 layer that shares `linear`'s parameters (no copy)."""
        layer = cls.__new__(cls)
        nn.Module.__init__(layer)
        layer.in_features, layer.out_features = linear.in_features, linear.out_features
        layer.weight = linear.weight
        layer.bias = linear.bias
        layer._set_recipe(recipe or Recipe.seed())
        return layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(f"fp8dot.torch.Linear({self.in_features}, {self.out_features}): "
                             f"input has {x.shape[-1]} features in its last dim")
        if torch.is_autocast_enabled(x.device.type):
            out_dtype = torch.get_autocast_dtype(x.device.type)
        else:
            out_dtype = x.dtype
        if not torch.compiler.is_compiling():
            self.last_input_shape = tuple(x.shape)  # for explain()
        x2d = x.reshape(-1, self.in_features)
        output = _Fp8Linear.apply(x2d, self.weight, self.bias, self.amax_history, self.recipe,
                                  out_dtype)
        return output.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, recipe={self.recipe.describe()}"
