"""fp8dot.torch.Linear(recompute_weight_transpose=True): dgrad's FP8 Wᵀ cast again in the
backward instead of kept from the forward. The same run bit for bit under every recipe, and
nothing of the weight's size kept between forward and backward. (Under FSDP2 and tensor
parallelism: test_torch_distributed.py.)"""

import copy
import dataclasses

import pytest
import torch
from torch import nn

import fp8dot.torch as ft
from conftest import DEVICES
from saved_tensors import fp8_bytes_kept_for_the_backward

RECIPES = {
    "seed-tensorwise": ft.Recipe.seed(),
    "seed-delayed": ft.Recipe.seed(scaling="delayed", amax_history_length=4),
    "seed-rowwise": ft.Recipe.seed(scaling="rowwise"),
    "deepseek-blocks": ft.Recipe.deepseek_blocks(),
    # The weight's transpose in another dtype than its forward cast: quantised on its own
    # (dgrad e4m3 x e5m2, a pair cuBLASLt multiplies; e5m2 x e5m2 it does not).
    "e5m2-dgrad-weight": ft.Recipe.seed().replace(
        dgrad=dataclasses.replace(ft.Recipe.seed().dgrad, lhs_dtype=ft.E4M3, rhs_dtype=ft.E5M2)),
}
# Partial 128-blocks and rows in both dims: every scale granularity's edge cases.
IN_FEATURES, OUT_FEATURES, ROWS = 200, 136, 72


def pair(recipe: ft.Recipe, device: str) -> tuple[ft.Linear, ft.Linear]:
    """The same layer twice (weights, bias, history): keeping Wᵀ, and casting it again."""
    torch.manual_seed(0)
    keep = ft.Linear(IN_FEATURES, OUT_FEATURES, recipe=recipe, device=device)
    again = copy.deepcopy(keep)
    again.recompute_weight_transpose = True
    return keep, again


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("recipe_name", list(RECIPES))
def test_casting_the_transpose_again_is_the_same_run_bit_for_bit(device, recipe_name):
    """Three steps of two calls each (the layer applied twice, as shared weights or a
    recomputed forward would: under delayed scaling the second call's backward records before
    the first call's runs, which must still cast with its own forward's scale), the weights
    updated in between: every output and gradient, and the history, equal to the bit."""
    keep, again = pair(RECIPES[recipe_name], device)
    data = torch.Generator().manual_seed(1)
    for step in range(3):
        x = (torch.randn(ROWS, IN_FEATURES, generator=data) * (step + 1)).to(device)
        results = []
        for layer in (keep, again):
            layer.zero_grad(set_to_none=True)
            x_leaf = x.clone().requires_grad_()
            hidden = layer(x_leaf)
            out = layer(torch.cat([hidden, hidden[:, :IN_FEATURES - OUT_FEATURES]], dim=1))
            (out.square().mean() + hidden.mean()).backward()
            results.append([out, x_leaf.grad, layer.weight.grad, layer.bias.grad])
        for got, want in zip(results[1], results[0]):
            assert torch.equal(got, want)
        assert results[0][2].abs().sum() > 0
        if keep.amax_history is not None:
            assert torch.equal(again.amax_history, keep.amax_history)
            assert (keep.amax_history[:, 0] > 0).all()
        with torch.no_grad():
            for layer in (keep, again):
                layer.weight -= 0.1 * layer.weight.grad
    assert keep.amax_history is None or (keep.amax_history[:, 3] > 0).all()


@pytest.mark.parametrize("recipe_name", list(RECIPES))
def test_the_backward_keeps_nothing_of_the_weight(recipe_name):
    """Kept: Xᵀ (rows × in) and Wᵀ (out × in), one byte an element. Cast again: Xᵀ alone."""
    keep, again = pair(RECIPES[recipe_name], "cpu")
    x = torch.randn(ROWS, IN_FEATURES, requires_grad=True)
    assert fp8_bytes_kept_for_the_backward(keep, x) == (ROWS + OUT_FEATURES) * IN_FEATURES
    assert fp8_bytes_kept_for_the_backward(again, x) == ROWS * IN_FEATURES
    # Without an input gradient there is no dgrad: neither layer keeps Wᵀ.
    x_constant = x.detach()
    assert fp8_bytes_kept_for_the_backward(keep, x_constant) == ROWS * IN_FEATURES


def test_convert_sets_it_explain_and_repr_name_it_and_it_compiles_without_a_graph_break():
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 128))
    keep = ft.convert(copy.deepcopy(model), ft.Recipe.deepseek_blocks())
    model = ft.convert(model, ft.Recipe.deepseek_blocks(), recompute_weight_transpose=True)
    assert all(layer.recompute_weight_transpose for layer in (model[0], model[2]))
    assert "recompute_weight_transpose=True" in repr(model[0])
    assert "recompute_weight_transpose" not in repr(keep[0])
    x = torch.randn(64, 128, generator=torch.Generator().manual_seed(3))
    explanation = torch._dynamo.explain(model)(x)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    # Compiled both (inductor's GELU is not eager's to the bit): the same gradients.
    for net in (model, keep):
        torch.compile(net, fullgraph=True)(x.clone().requires_grad_()).square().sum().backward()
    for got, want in zip(model.parameters(), keep.parameters()):
        assert torch.equal(got.grad, want.grad)
    table = ft.explain(model)
    assert table.count("(Wᵀ cast again in the backward)") == 6  # two layers, three GEMMs each
    assert "cast again" not in ft.explain(keep)
    # Converting again without it keeps the transposes.
    ft.convert(model, ft.Recipe.deepseek_blocks())
    assert not model[0].recompute_weight_transpose


def test_under_cached_weights_the_cache_holds_the_transpose():
    """fp8dot.torch.cached_weights keeps each weight's FP8 copies, its transpose included, for
    many calls: a layer there reads the cached Wᵀ rather than casting it again."""
    keep, again = pair(ft.Recipe.seed(), "cpu")
    x = torch.randn(ROWS, IN_FEATURES, requires_grad=True)
    with ft.cached_weights(again):
        out = again(x)
        saved = fp8_bytes_kept_for_the_backward(again, x)
    assert saved == (ROWS + OUT_FEATURES) * IN_FEATURES
    assert torch.equal(out, keep(x))
