"""fp8dot.torch.Linear: nn.Linear whose three GEMMs run in FP8 through fp8dot.

Every operand is quantised as a "contracting-last" matrix (rows × the GEMM's contracting dim,
row-major), which is the layout Hopper's FP8 tensor cores read (cuBLASLt's TN):

    forward  lhs X [M,K]     rhs W  [N,K]   (W as stored: no copy)
    dgrad    lhs dY [M,N]    rhs Wᵀ [K,N]
    wgrad    lhs dYᵀ [N,M]   rhs Xᵀ [K,M]

and passed to fp8dot's scaled_mm with the rhs as its transpose view. Each of X, W and dY is
therefore needed in both orientations; fp8dot's quantisation kernel writes both from one read
(q and q_t, each with the scales of its own contracting dim), so the backward pass keeps FP8
operands only: Xᵀ and Wᵀ, never the high-precision tensors (or Xᵀ alone, with Wᵀ cast again in
the backward: Linear's recompute_weight_transpose).
"""

from __future__ import annotations

import functools
import sys
import weakref
from typing import NamedTuple, Optional

import torch
from torch import nn

from . import ops  # also registers torch.ops.fp8dot
from .._arrays import row_major_strides
from .._quantize import both_orientations, gemm_scale_layout, transposed_only
from .amax_reduction import AmaxReduction, cast_scales
from .fp8_all_gather import GatheredFp8Weight, regathered_rows
from .quantize import quantize, scale_from_amax
from .recipe import GemmConfig, Recipe, check_recipe


def is_dtensor(tensor) -> bool:
    """Whether tensor is torch.distributed's DTensor (a tensor-parallel shard's global view).
    Looked up, not imported: no tensor is a DTensor before torch.distributed.tensor is loaded,
    and importing it would add ~0.4 s to `import fp8dot.torch`."""
    module = sys.modules.get("torch.distributed.tensor")
    return module is not None and isinstance(tensor, module.DTensor)

# What the quantisation kernels read (an input or a weight of another dtype is refused).
_QUANTIZABLE = (torch.float32, torch.bfloat16, torch.float16)

# Rows of a delayed-scaling layer's amax history.
_INPUT, _WEIGHT, _GRAD_OUTPUT = 0, 1, 2

Operand = tuple[torch.Tensor, torch.Tensor]  # (FP8 matrix, its scale in the matrix's terms)


def _granularity(recipe: Recipe, role: str) -> str:
    """'tensor', 'row', '1x128' or '128x128' for an operand role ('activation', 'weight',
    'gradient') under a recipe's scaling."""
    if recipe.scaling in ("tensorwise", "delayed"):
        return "tensor"
    if recipe.scaling == "rowwise":
        return "row"
    return "128x128" if role == "weight" else "1x128"


def _both_orientations(matrix: torch.Tensor, granularity: str, dtype: torch.dtype,
                       transposed_dtype: Optional[torch.dtype],
                       scale: Optional[torch.Tensor] = None, amax: bool = False,
                       up: Optional[torch.Tensor] = None, activation: Optional[str] = None,
                       transposed_scale: Optional[torch.Tensor] = None
                       ) -> tuple[Operand, Optional[Operand], Optional[torch.Tensor]]:
    """The matrix quantised for the GEMM that contracts its columns, unless transposed_dtype is
    None its transpose for the GEMM that contracts its rows, and (amax=True) max |matrix| from
    the same pass (fp8dot._quantize). With `up`, the matrix quantised is SiLU(matrix) · up, with
    activation="gelu" GELU(matrix), computed in the quantisation's pass and never written."""
    quantize_fn = (quantize if up is None and activation is None
                   else functools.partial(quantize, up=up, activation=activation))
    return both_orientations(quantize_fn, matrix, granularity, dtype, transposed_dtype, scale,
                             amax, transposed_scale)


def _activation_value(x: torch.Tensor, up: Optional[torch.Tensor],
                      activation: Optional[str]) -> torch.Tensor:
    """What the quantisation kernel forms on the way in (SiLU(x) · up, or GELU(x) in its tanh
    form), written out: in float32, rounded to x's dtype (include/fp8dot/quantize.h). Needed
    where the input's amax is reduced across ranks before its cast."""
    if activation == "gelu":
        return nn.functional.gelu(x.float(), approximate="tanh").to(x.dtype)
    return (nn.functional.silu(x.float()) * up.float()).to(x.dtype)


def _swiglu_backward(grad_product: torch.Tensor, gate: torch.Tensor, up: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradients of SiLU(gate) · up from the product's, in float32 (one fused elementwise
    kernel under torch.compile): d gate = d · up · σ(gate) · (1 + gate · (1 − σ(gate))),
    d up = d · SiLU(gate)."""
    g, u, d = gate.float(), up.float(), grad_product.float()
    sigmoid = torch.sigmoid(g)
    grad_gate = d * u * sigmoid * (1 + g * (1 - sigmoid))
    return grad_gate.to(gate.dtype), (d * g * sigmoid).to(up.dtype)


def _as_rhs(operand: Operand) -> Operand:
    """A contracting-last operand [N,K] as scaled_mm's rhs [K,N]: the matrix's transpose view,
    and a block scale's (tensor and per-row scales stay as they are). Views are cheap on the GPU
    but each costs a dispatcher call on the host, so a cached weight keeps its rhs form."""
    q, scale = operand
    return q.t(), scale.t() if scale.dim() == 2 else scale


def _gemm(lhs: Operand, rhs: Operand, config: GemmConfig, out_dtype: torch.dtype, backend: str,
          bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """lhs [M,K] · rhs [K,N]: lhs contracting-last, rhs in scaled_mm's form (`_as_rhs`)."""
    output, _ = torch.ops.fp8dot.scaled_mm.default(
        lhs[0], rhs[0], lhs[1], rhs[1], bias, None, out_dtype, config.precision[0],
        config.precision[1], False, backend)
    return output


class GemmCall(NamedTuple):
    """What `_gemm` hands scaled_mm, as array descriptions (dtype name, shape, strides) without
    data, and the output dtype."""
    lhs: tuple
    rhs: tuple
    lhs_scale: tuple
    rhs_scale: tuple
    bias: Optional[tuple]
    out_dtype: torch.dtype


def gemm_call(recipe: Recipe, gemm: str, m: int, n: int, k: int, out_dtype: torch.dtype,
              bias_dtype: Optional[torch.dtype] = None) -> GemmCall:
    """The call `_gemm` makes for one of a layer's GEMMs of M×N×K (the forward's bias, in the
    output dtype, when bias_dtype is given). The rhs and a 2-D rhs scale are transpose views,
    as `_gemm` passes them, with block-scale layouts as quantize writes them (1×128 ones
    column-major: gemm_scale_layout)."""
    config = getattr(recipe, gemm)
    lhs_role, rhs_role = {"forward": ("activation", "weight"), "dgrad": ("gradient", "weight"),
                          "wgrad": ("gradient", "activation")}[gemm]

    def description(dtype, shape):
        return (str(dtype), shape, row_major_strides(shape))

    def transposed(dtype, shape):
        flipped = tuple(reversed(shape))
        return (str(dtype), flipped, tuple(reversed(row_major_strides(shape))))

    lhs_granularity = _granularity(recipe, lhs_role)
    lhs_scale = ops.scale_shape(lhs_granularity, m, k)
    rhs_granularity = _granularity(recipe, rhs_role)
    rhs_scale = ops.scale_shape(rhs_granularity, n, k)
    # A 2-D rhs scale reaches scaled_mm as a transpose view. Viewed so, a column-major 1×128
    # scale [N, K/128] is row-major [K/128, N], and the 128×128 scale of a transposed operand
    # (dgrad's Wᵀ), W's scale viewed transposed, is W's own contiguous scale.
    transposed_back = gemm != "forward" and rhs_granularity == "128x128"
    if transposed_back or gemm_scale_layout(rhs_granularity) == "column-major":
        rhs_scale_description = description(torch.float32, tuple(reversed(rhs_scale)))
    else:
        rhs_scale_description = (transposed if len(rhs_scale) == 2 else description)(
            torch.float32, rhs_scale)
    lhs_scale_description = (transposed(torch.float32, tuple(reversed(lhs_scale)))
                             if gemm_scale_layout(lhs_granularity) == "column-major" else
                             description(torch.float32, lhs_scale))
    bias = None if bias_dtype is None else description(out_dtype, (n,))
    return GemmCall(description(config.lhs_dtype, (m, k)), transposed(config.rhs_dtype, (n, k)),
                    lhs_scale_description, rhs_scale_description, bias, out_dtype)


def _delayed_scales(amax_history: Optional[torch.Tensor], recipe: Recipe
                    ) -> Optional[torch.Tensor]:
    """The scales delayed scaling uses this step for X, W and dY ([3], the history's rows),
    from the history as it stands at the layer's forward (dY's row is unchanged until this
    step's backward records it); None under the other scalings, whose scales the quantisation
    kernel computes. While a row has no positive amax (the first step) its scale is 0, which
    quantize replaces by the tensor's own scale (current scaling) rather than guessing, in the
    same pass. One small kernel for all three: at 30 layers a step, each launch counts."""
    if amax_history is None:
        return None
    remembered = (amax_history.amax(dim=1) if recipe.amax_compute == "max"
                  else amax_history[:, 0])
    dtypes = (recipe.forward.lhs_dtype, recipe.forward.rhs_dtype, recipe.dgrad.lhs_dtype)
    scales = torch.stack([scale_from_amax(remembered[row], dtype, recipe.margin)
                          for row, dtype in enumerate(dtypes)])
    return torch.where(remembered > 0, scales, 0.0)


def _record_amaxes(amax_history: Optional[torch.Tensor], first_row: int,
                   amaxes: list[Optional[torch.Tensor]]) -> None:
    """Shifts rows first_row, first_row + 1, ... of the history by one step and stores this
    step's amaxes (max |tensor|, from their quantisation) in front, all in one operation."""
    if amax_history is not None:
        rows = amax_history[first_row:first_row + len(amaxes)]
        newest = torch.stack([amax.float().reshape(()) for amax in amaxes]).reshape(-1, 1)
        rows.copy_(torch.cat([newest, rows[:, :-1]], dim=1))


def _quantized_weight(weight: torch.Tensor, recipe: Recipe, transposed_dtype: Optional[torch.dtype],
                      scale: Optional[torch.Tensor], cache: Optional[dict], amax: bool,
                      amax_history: Optional[torch.Tensor], groups: tuple = ()
                      ) -> tuple[Operand, Optional[Operand], Optional[torch.Tensor]]:
    """The weight as the forward GEMM's rhs, unless transposed_dtype is None its transpose as
    dgrad's rhs (both in `_as_rhs` form), and (amax=True) max |weight|. With a cache
    (fp8dot.torch.cached_weights), the FP8 copies made from this very weight (same version,
    storage, recipe, and for delayed scaling the same version of the history its scale comes
    from) are reused instead of quantising it again. `groups`: the weight is a shard, whose
    amax is reduced over them (never cached: every rank must join every reduction). A weight
    FSDP2 gathered in FP8 (fp8dot.torch.fp8_all_gather) is that quantisation already; its
    "transpose" is then the gathered rows themselves, which the backward pass transposes
    (FSDP2 frees them after the forward and gathers them again before the backward, so nothing
    the size of the weight is kept in between)."""
    if isinstance(weight, GatheredFp8Weight):
        w_q = weight.operand(recipe.forward.rhs_dtype)
        return (_as_rhs(w_q), w_q if transposed_dtype is not None else None,
                weight._amax if amax else None)

    def fresh():
        cast = cast_scales(weight, groups, recipe.forward.rhs_dtype, transposed_dtype, scale)
        w_q, w_t, w_amax = _both_orientations(weight, _granularity(recipe, "weight"),
                                              recipe.forward.rhs_dtype, transposed_dtype,
                                              cast.scale, amax and cast.amax is None,
                                              transposed_scale=cast.transposed_scale)
        w_amax = w_amax if cast.amax is None else cast.amax
        return _as_rhs(w_q), None if w_t is None else _as_rhs(w_t), w_amax
    if cache is None or groups:
        return fresh()
    # The tensors themselves too (held weakly), not only their addresses: a new weight can be
    # given a freed one's address at the same version.
    key = (weight._version, weight.data_ptr(), weight.device, weight.dtype, tuple(weight.shape),
           recipe, None if amax_history is None else amax_history._version)
    entry = cache.get("entry")
    if (entry is None or entry[0] != key or entry[1]() is not weight
            or (amax_history is not None and entry[2]() is not amax_history)
            or (transposed_dtype is not None and entry[4] is None)):
        w_q, w_t, w_amax = fresh()
        cache["entry"] = (key, weakref.ref(weight),
                          None if amax_history is None else weakref.ref(amax_history),
                          w_q, w_t, w_amax)
        return w_q, w_t, w_amax
    return entry[3], entry[4] if transposed_dtype is not None else None, entry[5]


def _linear_forward(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                    amax_history: Optional[torch.Tensor], recipe: Recipe, out_dtype: torch.dtype,
                    weight_cache: Optional[dict], need_dgrad: bool, need_wgrad: bool,
                    record: bool, up: Optional[torch.Tensor] = None,
                    activation: Optional[str] = None,
                    reduction: AmaxReduction = AmaxReduction(),
                    defer_recording: bool = False
                    ) -> tuple[torch.Tensor, Optional[Operand], Optional[Operand],
                               Optional[torch.Tensor], Optional[list]]:
    """Y = X·Wᵀ (+ bias) in FP8, and what the backward pass will need: Xᵀ for wgrad (need_wgrad)
    and Wᵀ for dgrad (need_dgrad), written by the same quantisation kernels, as `_as_rhs`
    operands, else None; under delayed scaling this step's scales (X, W, dY), else None. `record`:
    a delayed-scaling history takes this call's amaxes (in training, not in eval mode); with
    `defer_recording` X's and W's are returned last instead, for the backward to record. With
    `up`, X is SiLU(x) · up (x the gate), with activation="gelu" GELU(x), quantised without
    being written. `reduction`: tensors of which this rank holds a part, whose tensorwise
    scales come from their amax over all ranks (fp8dot.torch.amax_reduction)."""
    recording = amax_history is not None and record  # the quantisations also give amaxes
    scales = _delayed_scales(amax_history, recipe)
    scale_x, scale_w = (None, None) if scales is None else (scales[_INPUT], scales[_WEIGHT])
    x_t_dtype = recipe.wgrad.rhs_dtype if need_wgrad else None
    if reduction.input and (up is not None or activation is not None):
        # The activation's amax is needed before its cast: formed here, not in the cast.
        x, up, activation = _activation_value(x, up, activation), None, None
    x_cast = cast_scales(x, reduction.input, recipe.forward.lhs_dtype, x_t_dtype, scale_x)
    x_q, x_t, x_amax = _both_orientations(
        x, _granularity(recipe, "activation"), recipe.forward.lhs_dtype, x_t_dtype, x_cast.scale,
        recording and x_cast.amax is None, up, activation, x_cast.transposed_scale)
    x_amax = x_amax if x_cast.amax is None else x_cast.amax
    w_rhs, w_t_rhs, w_amax = _quantized_weight(
        weight, recipe, recipe.dgrad.rhs_dtype if need_dgrad else None, scale_w, weight_cache,
        recording, amax_history, reduction.weight)
    pending = [x_amax, w_amax] if recording and defer_recording else None
    if recording and not defer_recording:
        _record_amaxes(amax_history, _INPUT, [x_amax, w_amax])  # rows _INPUT and _WEIGHT
    bias_for_gemm = None if bias is None else bias.to(out_dtype)
    output = _gemm(x_q, w_rhs, recipe.forward, out_dtype, recipe.backend, bias_for_gemm)
    return output, None if x_t is None else _as_rhs(x_t), w_t_rhs, scales, pending


def _weight_transpose_again(weight: torch.Tensor, recipe: Recipe,
                            delayed_scale: Optional[torch.Tensor], groups: tuple) -> Operand:
    """dgrad's Wᵀ quantised again in the backward, as `_quantized_weight` wrote it in the forward
    (Linear's recompute_weight_transpose): the same scales (delayed scaling's from the forward;
    current scales from the same weight, reduced over the same groups), the transposed
    orientation alone."""
    granularity = _granularity(recipe, "weight")
    dtype = recipe.dgrad.rhs_dtype
    cast = cast_scales(weight, groups, recipe.forward.rhs_dtype, dtype, delayed_scale)
    # The forward's pass casts a transpose of its own dtype with its own scale; one of another
    # dtype with the current scale (both_orientations).
    scale = cast.scale if dtype == recipe.forward.rhs_dtype else cast.transposed_scale
    result = transposed_only(quantize, weight, granularity, dtype, scale=scale)
    return _as_rhs((result.q_t, result.scale_t))


class _Fp8Linear(torch.autograd.Function):
    """The layer's forward and backward; with `up`, the layer applied to SiLU(x) · up (x the
    gate), whose gradients it returns for x and up; with activation="gelu", applied to GELU(x),
    whose gradient it returns for x."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                amax_history: Optional[torch.Tensor], recipe: Recipe, out_dtype: torch.dtype,
                weight_cache: Optional[dict], record: bool, up: Optional[torch.Tensor] = None,
                activation: Optional[str] = None, reduction: AmaxReduction = AmaxReduction(),
                recompute_weight_transpose: bool = False):
        need_dgrad = ctx.needs_input_grad[0] or (up is not None and ctx.needs_input_grad[8])
        # Wᵀ cast again in the backward rather than kept: not for a weight gathered in FP8
        # (dgrad transposes the gathered bytes), nor when the weight cache holds Wᵀ anyway.
        ctx.weight_transpose_again = (recompute_weight_transpose and need_dgrad and
                                      weight_cache is None and
                                      not isinstance(weight, GatheredFp8Weight))
        # Delayed scaling: X's and W's amaxes go into the history in the backward, with dY's, so
        # that until then the history is the one this forward cast with. Whatever runs between
        # this forward and its backward sees the same scales: activation checkpointing's
        # recomputed forward, and FSDP2's gather before the backward of a weight gathered in
        # FP8 (fp8_all_gather.py). A forward no backward follows records at once (Linear._run).
        output, x_t, w_t, scales, ctx.pending_amaxes = _linear_forward(
            x, weight, bias, amax_history, recipe, out_dtype, weight_cache,
            need_dgrad and not ctx.weight_transpose_again, ctx.needs_input_grad[1], record, up,
            activation, reduction, defer_recording=True)
        ctx.recipe, ctx.dy_groups, ctx.weight_groups = recipe, reduction.grad_output, reduction.weight
        # FSDP2 gathers such a weight again for the backward (into the same memory, with the
        # scale of that gather): dgrad reads the bytes and scale it holds then.
        ctx.gathered_weight = weight if isinstance(weight, GatheredFp8Weight) else None
        ctx.x_dtype, ctx.weight_dtype, ctx.has_bias = x.dtype, weight.dtype, bias is not None
        ctx.bias_dtype = None if bias is None else bias.dtype
        x_t = x_t or (None, None)
        w_t = (None, None) if w_t is None or ctx.gathered_weight is not None else w_t
        # The activation's gradients need its inputs (which an unfused activation keeps too):
        # SwiGLU's gate and up, GELU's x.
        ctx.activation = activation
        activation_inputs = ((x, up) if (up is not None or activation == "gelu") and need_dgrad
                             else (None, None))
        # The weight itself where Wᵀ is cast again: the parameter, which lives on anyway (FSDP2
        # frees its gathered storage after the forward and gathers it again before the backward,
        # as for nn.Linear, which saves it too).
        ctx.save_for_backward(x_t[0], x_t[1], w_t[0], w_t[1], scales,
                              weight if ctx.weight_transpose_again else None, *activation_inputs)
        # The history is state that every call updates in place, so it is not a saved tensor:
        # saved, a layer called twice in one step (shared weights, activation checkpointing's
        # recomputation) failed autograd's check that nothing it saved was modified.
        ctx.amax_history = amax_history if record else None
        return output

    @staticmethod
    @torch.autograd.function.once_differentiable  # the FP8 ops have no derivatives of their own
    def backward(ctx, grad_output: torch.Tensor):
        recipe: Recipe = ctx.recipe
        (x_t_rhs_q, x_t_rhs_scale, w_t_rhs_q, w_t_rhs_scale, scales, weight, gate,
         up) = ctx.saved_tensors
        scale_dy = None if scales is None else scales[_GRAD_OUTPUT]
        amax_history = ctx.amax_history
        dy = grad_output.contiguous()
        need_dgrad = ctx.needs_input_grad[0] or ctx.needs_input_grad[8]
        need_wgrad = ctx.needs_input_grad[1]
        grad_x = grad_w = grad_bias = grad_up = None
        if need_dgrad or need_wgrad:
            recording = amax_history is not None  # None in eval mode
            granularity = _granularity(recipe, "gradient")
            if need_dgrad:
                dy_t_dtype = recipe.wgrad.lhs_dtype if need_wgrad else None
                dy_cast = cast_scales(dy, ctx.dy_groups, recipe.dgrad.lhs_dtype, dy_t_dtype,
                                      scale_dy)
                dy_q, dy_t, dy_amax = _both_orientations(
                    dy, granularity, recipe.dgrad.lhs_dtype, dy_t_dtype, dy_cast.scale,
                    recording and dy_cast.amax is None,
                    transposed_scale=dy_cast.transposed_scale)
                w_t_rhs = (w_t_rhs_q, w_t_rhs_scale)
                gathered = ctx.gathered_weight
                if gathered is not None:  # the rows FSDP2 gathered again for this pass
                    w_t_rhs = _as_rhs((regathered_rows(gathered._data).t().contiguous(),
                                       gathered._scale))
                elif ctx.weight_transpose_again:
                    w_t_rhs = _weight_transpose_again(
                        weight, recipe, None if scales is None else scales[_WEIGHT],
                        ctx.weight_groups)
                grad_x = _gemm(dy_q, w_t_rhs, recipe.dgrad, ctx.x_dtype, recipe.backend)
            else:  # only dYᵀ (the delayed scale is dY's in the dgrad dtype)
                same_dtype = recipe.wgrad.lhs_dtype == recipe.dgrad.lhs_dtype
                dy_cast = cast_scales(dy, ctx.dy_groups, recipe.wgrad.lhs_dtype, None,
                                      scale_dy if same_dtype else None)
                only_t = transposed_only(quantize, dy, granularity, recipe.wgrad.lhs_dtype,
                                         scale=dy_cast.scale,
                                         amax=recording and dy_cast.amax is None)
                dy_t, dy_amax = (only_t.q_t, only_t.scale_t), only_t.amax
            dy_amax = dy_amax if dy_cast.amax is None else dy_cast.amax
            if ctx.pending_amaxes is not None:  # rows _INPUT, _WEIGHT and _GRAD_OUTPUT
                _record_amaxes(amax_history, _INPUT, [*ctx.pending_amaxes, dy_amax])
            if need_wgrad:
                grad_w = _gemm(dy_t, (x_t_rhs_q, x_t_rhs_scale), recipe.wgrad,
                               ctx.weight_dtype, recipe.backend)
        elif ctx.pending_amaxes is not None:  # only the bias's gradient: no dY cast
            _record_amaxes(amax_history, _INPUT, ctx.pending_amaxes)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = dy.sum(0).to(ctx.bias_dtype)
        if gate is not None and grad_x is not None:  # grad_x is the activation's gradient
            if ctx.activation == "gelu":  # as an unfused F.gelu(approximate="tanh") computes it
                grad_x = torch.ops.aten.gelu_backward(grad_x, gate, approximate="tanh")
            else:
                grad_x, grad_up = _swiglu_backward(grad_x, gate, up)
        return grad_x, grad_w, grad_bias, None, None, None, None, None, grad_up, None, None, None


class Linear(nn.Linear):
    """A drop-in nn.Linear whose forward and gradient GEMMs run in FP8 with fp8dot.

    The recipe decides each GEMM's formats and PrecisionConfig (by default the seed's rule:
    forward fast, gradients promoted) and the scaling. Parameters stay in their dtype (the
    optimizer's master weights); inputs of any leading shape [..., in_features] are flattened
    into the GEMM's M. Under autocast the input is cast to the autocast dtype before it is
    quantised (as nn.Linear's is) and the output has that dtype; otherwise the input's.

    Delayed scaling's amax history is updated in training mode only: in eval mode (model.eval())
    the layer casts with the history's scales and records nothing, as BatchNorm keeps its
    running statistics, so validation passes do not change the training run. A training call's
    amaxes (X, W and dY) enter the history in its backward, so every forward of a step casts
    with the history as the step began — the first run and activation checkpointing's
    recomputation alike (use_reentrant=False; a layer whose recomputation would see a changed
    history is refused), and FSDP2's gathers before the backward; a forward no backward
    follows (torch.no_grad()) records at once, one whose graph is dropped unused records
    nothing. The layer is differentiable once (a second derivative raises).

    Beyond one GPU (docs/distributed.md): `amax_reduction_group`, a torch.distributed process
    group over which the batch is split (DDP's, FSDP's), makes tensorwise and delayed scales of
    the input and the output's gradient those of the whole batch, on every rank alike. A weight
    sharded by tensor parallelism (a DTensor from torch's ColwiseParallel or RowwiseParallel)
    runs the layer on the local shards, its amaxes reduced over the shards' mesh.

    Memory: the backward's dgrad multiplies by Wᵀ in FP8, which the forward writes from the
    same pass as W's cast and keeps until the backward: one byte per weight element, for every
    layer at once at the start of the backward. With `recompute_weight_transpose=True` the
    layer keeps nothing of the weight and casts Wᵀ again in its backward instead (one more pass
    over the weight), bit-identical under every recipe: for large models under FSDP2, where the
    kept copies would add up to one byte per parameter of the whole model on every GPU. (A
    weight FSDP2 gathers in FP8, fp8dot.torch.fp8_all_gather, keeps nothing either way.)
    """

    # A class default too, for layers pickled before the option existed.
    recompute_weight_transpose: bool = False

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None, *, recipe: Optional[Recipe] = None, amax_reduction_group=None,
                 recompute_weight_transpose: bool = False):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        self._set_recipe(recipe or Recipe.seed())
        self.amax_reduction_group = amax_reduction_group
        self.recompute_weight_transpose = recompute_weight_transpose

    def _set_recipe(self, recipe: Recipe) -> None:
        self.recipe = check_recipe(recipe, "fp8dot.torch.Linear")
        self._buffers.pop("amax_history", None)  # a new recipe (convert) starts afresh
        self.__dict__.pop("amax_history", None)
        if recipe.scaling == "delayed":
            # A buffer, so state_dict() carries it and a resumed run continues bit-identically.
            self.register_buffer("amax_history",
                                 torch.zeros(3, recipe.amax_history_length, dtype=torch.float32,
                                             device=self.weight.device))
        else:
            self.amax_history = None
        self.weight_cache: Optional[dict] = None  # set inside fp8dot.torch.cached_weights
        self.last_input_shape: Optional[tuple[int, ...]] = None
        # The weight (this rank's shard under tensor parallelism) the last call multiplied,
        # and ("column-parallel" or "row-parallel", shards) when it was a shard.
        self.last_weight_shape: Optional[tuple[int, int]] = None
        self.last_tensor_parallel: Optional[tuple[str, int]] = None
        # (the input's dtype after autocast's cast, the output's)
        self.last_dtypes: Optional[tuple[torch.dtype, torch.dtype]] = None

    def reset_parameters(self) -> None:
        """nn.Linear's, and an empty delayed-scaling history (after `to_empty()` from the meta
        device it holds whatever the memory held, which would become this step's scales)."""
        super().reset_parameters()
        history = self._buffers.get("amax_history")  # None in nn.Linear.__init__
        if history is not None:
            with torch.no_grad():
                history.zero_()

    @classmethod
    def from_linear(cls, linear: nn.Linear, recipe: Optional[Recipe] = None,
                    amax_reduction_group=None, recompute_weight_transpose: bool = False
                    ) -> "Linear":
        """An FP8 layer that shares `linear`'s parameters (no copy)."""
        layer = cls.__new__(cls)
        nn.Module.__init__(layer)
        # What else the module carries over: its mode, and its hooks (the same dicts, so the
        # handles that registered them still remove them).
        layer.train(linear.training)
        for name, value in vars(linear).items():
            if "hook" in name:
                layer.__dict__[name] = value
        layer.in_features, layer.out_features = linear.in_features, linear.out_features
        layer.weight = linear.weight
        layer.bias = linear.bias
        layer._set_recipe(recipe or Recipe.seed())
        layer.amax_reduction_group = amax_reduction_group
        layer.recompute_weight_transpose = recompute_weight_transpose
        return layer

    def amax_reduction(self, tensor_parallel: AmaxReduction = AmaxReduction()) -> AmaxReduction:
        """The groups over which this layer's amaxes are reduced: the batch's (the input's and
        the output gradient's, `amax_reduction_group`) and, given by the tensor-parallel path,
        the shards'. None under row and block scaling, whose scales do not span ranks."""
        if self.recipe.scaling not in ("tensorwise", "delayed"):
            return AmaxReduction()
        group = getattr(self, "amax_reduction_group", None)
        if group is not None and not isinstance(group, torch.distributed.ProcessGroup):
            raise TypeError(f"fp8dot.torch.Linear({self.in_features}, {self.out_features}): "
                            "amax_reduction_group must be a torch.distributed ProcessGroup "
                            f"(e.g. dist.group.WORLD, after init_process_group), got {group!r}")
        batch = () if group is None else (group,)
        return AmaxReduction(batch + tensor_parallel.input, tensor_parallel.weight,
                             batch + tensor_parallel.grad_output)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._run(x, None)

    def swiglu(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        """This layer applied to SiLU(gate) · up — a gated MLP's down projection of its gate and
        up projections — with the product computed inside the FP8 quantisation and never
        written: `down.swiglu(gate(x), up(x))` equals `down(F.silu(gate(x)) * up(x))` up to
        the product's rounding (float32 here, then the input dtype; include/fp8dot/quantize.h).
        The backward pass returns the gate's and up's gradients from the same saved tensors an
        unfused SiLU · up keeps."""
        if up.shape != gate.shape:
            raise ValueError(f"fp8dot.torch.Linear({self.in_features}, {self.out_features})"
                             f".swiglu: gate {tuple(gate.shape)} and up {tuple(up.shape)} "
                             "differ in shape")
        return self._run(gate, up)

    def gelu(self, x: torch.Tensor) -> torch.Tensor:
        """This layer applied to GELU(x) in its tanh form — an MLP's down projection of its up
        projection — with the activation computed inside the FP8 quantisation and never written:
        `down.gelu(up(x))` equals `down(F.gelu(up(x), approximate="tanh"))` up to the
        activation's rounding (float32 here, then the input dtype; include/fp8dot/quantize.h).
        The backward pass returns x's gradient as the unfused GELU computes it."""
        return self._run(x, None, "gelu")

    def _run(self, x: torch.Tensor, up: Optional[torch.Tensor],
             activation: Optional[str] = None) -> torch.Tensor:
        """forward(x); with `up` swiglu(x, up); with activation="gelu" gelu(x)."""
        if is_dtensor(self.weight) or is_dtensor(x):
            from .tensor_parallel import run_sharded  # torch.distributed's DTensor
            return run_sharded(self, x, up, activation)
        return self.run_local(x, up, activation, self.weight, self.bias, self.amax_reduction())

    def run_local(self, x: torch.Tensor, up: Optional[torch.Tensor], activation: Optional[str],
                  weight: torch.Tensor, bias: Optional[torch.Tensor],
                  reduction: AmaxReduction) -> torch.Tensor:
        """The layer on plain tensors: the whole weight, or this rank's shard of it (and of x)
        with the amaxes that span shards reduced over `reduction`'s groups."""
        in_features = weight.shape[1]
        if x.shape[-1] != in_features:
            raise ValueError(f"fp8dot.torch.Linear({self.in_features}, {self.out_features}): "
                             f"input has {x.shape[-1]} features in its last dim")
        if torch.is_autocast_enabled(x.device.type):
            out_dtype = torch.get_autocast_dtype(x.device.type)
            # As nn.Linear under autocast (and torchao's layer), the input is cast to the
            # autocast dtype first; torch.compile fuses that cast into the op that made x (an
            # f32 RMSNorm output is then written and quantised at half the bytes). The fp32
            # weight is quantised as it is: it has no producer to fuse with.
            x = x.to(out_dtype)
            up = None if up is None else up.to(out_dtype)
        else:
            out_dtype = x.dtype
        if up is not None and up.dtype != x.dtype:
            raise TypeError(f"fp8dot.torch.Linear({self.in_features}, {self.out_features})"
                            f".swiglu: gate is {x.dtype} but up is {up.dtype}")
        for tensor, what in ((x, "input"), (weight, "weight")):
            if tensor.dtype not in _QUANTIZABLE:
                raise TypeError(f"fp8dot.torch.Linear({self.in_features}, {self.out_features}): "
                                f"the {what} is {tensor.dtype}; FP8 layers quantise float32, "
                                "bfloat16 or float16 (cast the model, or run it under autocast)")
        compiling = torch.compiler.is_compiling()
        if not compiling:  # for explain(); not through nn.Module.__setattr__, which is slow
            # (run_sharded sets last_tensor_parallel after this, for a sharded call.)
            self.__dict__.update(last_input_shape=tuple(x.shape), last_dtypes=(x.dtype, out_dtype),
                                 last_weight_shape=tuple(weight.shape), last_tensor_parallel=None)
        out_features = weight.shape[0]
        x2d = x.reshape(-1, in_features)
        up2d = None if up is None else up.reshape(-1, in_features)
        if x2d.shape[0] == 0:
            if reduction:
                # The other ranks' reductions wait for this one's amaxes: it runs one row of
                # zeros (amax 0, gradients 0) through the FP8 path and returns none of it.
                def one_zero_row(t):
                    return None if t is None else torch.cat([t, t.new_zeros(1, in_features)])
                output = self._fp8_linear(one_zero_row(x2d), weight, bias, out_dtype,
                                          one_zero_row(up2d), activation, reduction, compiling)
                return output[:0].reshape(*x.shape[:-1], out_features)
            # No rows (an MoE expert that got no tokens): nothing to quantise or multiply. The
            # output and gradients are nn.Linear's (empty; zero for the weight and bias), and a
            # delayed-scaling history records nothing.
            bias = None if bias is None else bias.to(out_dtype)
            if up2d is not None:
                x2d = nn.functional.silu(x2d) * up2d
            elif activation == "gelu":
                x2d = nn.functional.gelu(x2d, approximate="tanh")
            output = nn.functional.linear(x2d, weight.to(out_dtype), bias)
            return output.reshape(*x.shape[:-1], out_features)
        output = self._fp8_linear(x2d, weight, bias, out_dtype, up2d, activation, reduction,
                                  compiling)
        # A matrix input gets the GEMM's output itself, not a view of it (FSDP2 warns about
        # modules that return views: an in-place op on one would skip its backward hook).
        return output if x.dim() == 2 else output.reshape(*x.shape[:-1], out_features)

    def _fp8_linear(self, x2d: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                    out_dtype: torch.dtype, up2d: Optional[torch.Tensor],
                    activation: Optional[str], reduction: AmaxReduction,
                    compiling: bool) -> torch.Tensor:
        """The FP8 GEMMs on rows x2d [M, K] (M > 0): an autograd node where a backward pass
        can come, else the forward alone."""
        history = self.amax_history
        if is_dtensor(history):  # tensor parallelism replicates buffers as DTensors
            history = history.to_local()  # the same storage: updates land in the buffer
        # A compiled graph quantises the weight every call: the cache is Python state. A
        # delayed-scaling layer in training records its weight's amax every call: no cache.
        recording = history is not None and self.training
        if recording and not compiling:
            self._check_forward_sees_its_history(history)
        cache = None if compiling or recording else self.weight_cache
        if torch.is_grad_enabled() and (x2d.requires_grad or weight.requires_grad or
                                        (bias is not None and bias.requires_grad) or
                                        (up2d is not None and up2d.requires_grad)):
            return _Fp8Linear.apply(x2d, weight, bias, history, self.recipe, out_dtype, cache,
                                    self.training, up2d, activation, reduction,
                                    self.recompute_weight_transpose)
        # No backward pass can come: no autograd node, no transposes.
        return _linear_forward(x2d, weight, bias, history, self.recipe, out_dtype, cache, False,
                               False, self.training, up2d, activation, reduction)[0]

    def _check_forward_sees_its_history(self, history: torch.Tensor) -> None:
        """A delayed-scaling forward run again inside the backward (activation checkpointing's
        recomputation) must cast with the scales the first run took, from the same history.
        The first run's amaxes go in at its backward, after the recomputation, so a single
        call per step recomputes bit for bit; the history changed in between (the layer ran
        more than once under checkpointing, or a reentrant checkpoint's first run recorded at
        once, having no backward of its own) is refused rather than cast differently."""
        in_backward = getattr(torch._C, "_current_graph_task_id", lambda: -1)() != -1
        if not in_backward:
            self.__dict__["_history_version_at_forward"] = history._version
        elif history._version != self.__dict__.get("_history_version_at_forward"):
            raise RuntimeError(
                f"fp8dot.torch.Linear({self.in_features}, {self.out_features}) with delayed "
                "scaling: its forward is being recomputed in the backward (activation "
                "checkpointing) after its amax history changed, so it would cast with other "
                "scales than its first run. This happens when the layer runs more than once a "
                "step under checkpointing, or under reentrant checkpointing (use_reentrant=True"
                "). Checkpoint with use_reentrant=False around single calls, or use current "
                "scaling (tensorwise) for this layer")

    def extra_repr(self) -> str:
        again = ", recompute_weight_transpose=True" if self.recompute_weight_transpose else ""
        return f"{super().extra_repr()}, recipe={self.recipe.describe()}{again}"
