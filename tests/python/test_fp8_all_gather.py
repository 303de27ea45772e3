"""fp8dot.torch.fp8_all_gather in one process: the weight wrapper FSDP2 gathers in FP8 is the
weight everywhere else, and the gathered FP8 weight is what the layer would have cast. The
FSDP2 runs themselves (2 processes, gloo) are in test_torch_distributed.py."""

import io

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import fp8dot.torch as ft  # noqa: E402
from fp8dot.torch.fp8_all_gather import Fp8AllGatherWeight, GatheredFp8Weight  # noqa: E402


def mlp(recipe=None) -> nn.Sequential:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 128))
    return ft.convert(model, recipe or ft.Recipe.seed())


def run(model: nn.Module, steps: int = 2) -> tuple[list[float], list[torch.Tensor]]:
    """`steps` SGD steps on fixed data: the losses and the final parameters."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        x = torch.randn(64, 128, generator=torch.Generator().manual_seed(step))
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]


def test_without_fsdp_the_wrapped_weights_train_as_the_plain_ones():
    wrapped = ft.fp8_all_gather(mlp())
    assert all(isinstance(wrapped[i].weight, Fp8AllGatherWeight) for i in (0, 2))
    assert isinstance(wrapped[0].weight, nn.Parameter) and wrapped[0].weight.requires_grad
    losses, params = run(wrapped)
    plain_losses, plain_params = run(mlp())
    assert losses == plain_losses
    assert all(torch.equal(p, q) for p, q in zip(params, plain_params))
    # The optimizer's in-place updates kept the wrapper.
    assert isinstance(wrapped[0].weight, Fp8AllGatherWeight)
    table = ft.explain(wrapped)
    assert table.count("0 (W gathered in FP8)") == 3 and table.count("2 (W gathered in FP8)") == 3
    assert "gathered" not in ft.explain(mlp())


def test_a_state_dict_of_wrapped_weights_loads_into_a_plain_model():
    wrapped = ft.fp8_all_gather(mlp())
    buffer = io.BytesIO()
    torch.save(wrapped.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    assert type(state["0.weight"]) is torch.Tensor
    plain = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 128))
    plain.load_state_dict(state)
    assert torch.equal(plain[0].weight, mlp()[0].weight)
    wrapped.load_state_dict(plain.state_dict())  # and back, in place
    assert isinstance(wrapped[0].weight, Fp8AllGatherWeight)


def test_a_shared_weight_stays_shared():
    model = mlp()
    model.append(ft.Linear(128, 256))
    model[3].weight = model[0].weight
    ft.fp8_all_gather(model)
    assert model[3].weight is model[0].weight
    assert isinstance(model[0].weight, Fp8AllGatherWeight)
    ft.fp8_all_gather(model)  # again: nothing changes
    assert model[3].weight is model[0].weight


@pytest.mark.parametrize("recipe, reason", [
    (ft.Recipe.seed(scaling="rowwise"), "scales 'rowwise'"),
    (ft.Recipe.deepseek_blocks(), "scales 'blocks'"),
])
def test_recipes_without_one_weight_scale_are_refused_by_layer(recipe, reason):
    model = mlp(recipe)
    with pytest.raises(ValueError, match=r"0: its recipe " + reason + r"[\s\S]*2: its recipe"):
        ft.fp8_all_gather(model)
    assert type(model[0].weight) is nn.Parameter  # nothing was wrapped


def test_a_weight_delayed_scaling_layers_share_is_refused():
    """Each layer keeps its own amax history, so a shared weight has no one delayed scale."""
    model = mlp(ft.Recipe.seed(scaling="delayed"))
    model.append(ft.convert(nn.Sequential(nn.Linear(128, 256)), model[0].recipe)[0])
    model[3].weight = model[0].weight
    with pytest.raises(ValueError, match="0 and 3: its weight is shared by layers that keep an "
                                         "amax history each"):
        ft.fp8_all_gather(model)
    assert type(model[0].weight) is nn.Parameter


def test_each_gather_checks_the_recipe_again():
    """FSDP2 names the weight's layer at each gather (fsdp_pre_all_gather's `module`): a recipe
    changed since the weight was wrapped is refused there when it cannot be gathered in FP8; a
    shared weight, once its layers scale with delayed scaling. Tensorwise layers gather with
    the weight's own scale (None here), delayed ones with their history's."""
    model = ft.fp8_all_gather(mlp())
    weight = model[0].weight
    assert weight._delayed_scale(model[0]) is None
    ft.convert(model, ft.Recipe.seed(scaling="delayed"))
    assert isinstance(model[0].weight, Fp8AllGatherWeight)
    model[0].amax_history[1, 0] = 448.0 * 2.0  # a weight amax of 2 * 448: scale 2
    assert weight._delayed_scale(model[0]).item() == 2.0
    ft.convert(model, ft.Recipe.seed(scaling="rowwise"))
    with pytest.raises(ValueError, match="recipe changed since its weight was wrapped, and its "
                                         "recipe scales 'rowwise'"):
        weight._delayed_scale(model[0])
    shared = mlp()
    shared.append(ft.Linear(128, 256))
    shared[3].weight = shared[0].weight
    ft.fp8_all_gather(shared)
    ft.convert(shared, ft.Recipe.seed(scaling="delayed"))
    with pytest.raises(ValueError, match="its weight is shared by layers"):
        shared[0].weight._delayed_scale(shared[0])


def test_under_delayed_scaling_a_gathered_weights_history_is_a_plain_weights():
    """FSDP2 gathers the weight again before the backward, with the scale of the history as it
    stands, which every delayed-scaling layer keeps unchanged until its backward records the
    step's amaxes; the gathered amax goes in as the plain weight's does. A forward no backward
    follows records at once."""
    recipe = ft.Recipe.seed(scaling="delayed", amax_history_length=4)
    torch.manual_seed(4)
    plain = ft.Linear(128, 256, recipe=recipe)
    layer = ft.Linear(128, 256, recipe=recipe)
    layer.weight = nn.Parameter(gathered(plain.weight.detach()))
    layer.bias = nn.Parameter(plain.bias.detach().clone())
    x = torch.randn(64, 128, requires_grad=True)
    outputs = [plain(x), layer(x)]
    assert not plain.amax_history.any() and not layer.amax_history.any()
    for output in outputs:
        output.square().sum().backward()
    assert torch.equal(plain.amax_history, layer.amax_history)
    assert layer.amax_history[1, 0] == plain.weight.abs().max()
    with torch.no_grad():
        layer(x)
    assert layer.amax_history[1, 1] == layer.amax_history[1, 0] > 0
    layer.weight.requires_grad_(False)
    layer(x.detach()).sum().backward()  # only the bias's gradient: no GEMM, W's amax recorded
    assert (layer.amax_history[1, :3] == plain.weight.abs().max()).all()
    assert layer.amax_history[1, 3] == 0


def test_a_model_without_fp8_layers_is_refused():
    with pytest.raises(ValueError, match="no fp8dot.torch.Linear"):
        ft.fp8_all_gather(nn.Sequential(nn.Linear(4, 4)))


def gathered(weight: torch.Tensor, dtype=ft.E4M3) -> GatheredFp8Weight:
    """What fsdp_post_all_gather builds: the whole weight cast tensorwise."""
    cast = ft.quantize(weight, dtype, "tensor", amax=True)
    return GatheredFp8Weight(cast.q, cast.scale, weight.dtype, cast.amax)


def test_the_layer_multiplies_a_gathered_weight_as_the_weight_it_dequantises_to(monkeypatch):
    """Casting the dequantised weight again gives the same bytes (its amax is 448 · scale), so
    the layer on the gathered FP8 weight equals the layer on its dequantised values, outputs and
    gradients, bit for bit; forward and dgrad both read the gathered bytes (nothing
    dequantises the gathered weight on the way)."""
    dequantisations = []
    original = GatheredFp8Weight.dequantised
    monkeypatch.setattr(GatheredFp8Weight, "dequantised",
                        lambda self: dequantisations.append(1) or original(self))
    torch.manual_seed(1)
    layer = ft.Linear(128, 256)
    weight = gathered(layer.weight.detach())
    dequantised = weight.dequantised()
    assert dequantised.dtype == torch.float32
    x = torch.randn(64, 128, requires_grad=True)
    results = []
    dequantisations.clear()
    for w in (weight, dequantised):
        layer.weight = nn.Parameter(w)
        output = layer(x)
        output.square().sum().backward()
        results.append((output.detach(), x.grad.clone(), layer.weight.grad.clone()))
        x.grad = None
        assert not dequantisations
    for got, want in zip(*results):
        assert torch.equal(got, want)


def test_a_backward_whose_gathered_weight_was_freed_and_not_gathered_again_is_refused():
    """FSDP2 frees the gathered bytes after the forward (their storage shrinks to 0 bytes) and
    gathers them again before the layer's backward; a backward without that gather would read
    freed memory. Freed by hand here, as FSDP2 frees them: refused, naming what happened."""
    torch.manual_seed(3)
    layer = ft.Linear(128, 256)
    weight = gathered(layer.weight.detach())
    layer.weight = nn.Parameter(weight)
    x = torch.randn(64, 128, requires_grad=True)
    output = layer(x)
    weight._data.untyped_storage().resize_(0)
    with pytest.raises(RuntimeError, match="holds 0 of 32768 bytes: FSDP2 freed it"):
        output.sum().backward()


def test_a_gathered_weight_is_its_dequantised_values_to_other_ops_and_refuses_writes():
    torch.manual_seed(2)
    weight = gathered(torch.randn(32, 64))
    expected = weight._data.float() * weight._scale
    assert torch.equal(weight + 0, expected)
    assert torch.equal(weight.to(torch.float32), expected)
    view = weight.view(64, 32)  # views keep the FP8 bytes
    assert isinstance(view, GatheredFp8Weight) and view._data.dtype == ft.E4M3
    assert "GatheredFp8Weight((32, 64), torch.float8_e4m3fn" in repr(weight)
    with pytest.raises(RuntimeError, match="gathered in FP8"):
        weight.add_(1)


def test_a_recipe_changed_after_wrapping_is_named_when_the_types_disagree():
    torch.manual_seed(3)
    layer = ft.Linear(64, 32, recipe=ft.Recipe.seed())
    layer.weight = nn.Parameter(gathered(layer.weight.detach(), ft.E5M2))
    with pytest.raises(TypeError, match="gathered in torch.float8_e5m2"):
        layer(torch.randn(4, 64))


def test_deepcopy_and_dtype_conversion_keep_the_wrapper():
    import copy

    model = ft.fp8_all_gather(mlp())
    x = torch.randn(8, 128)
    twin = copy.deepcopy(model)
    assert isinstance(twin[0].weight, Fp8AllGatherWeight)
    assert twin[0].weight is not model[0].weight
    assert torch.equal(twin(x), model(x))
    model.to(torch.bfloat16)
    assert isinstance(model[0].weight, Fp8AllGatherWeight)
    assert model[0].weight.dtype == torch.bfloat16 and model(x.bfloat16()).dtype == torch.bfloat16


def test_fsdps_set_up_is_read_from_its_state_and_a_torch_without_it_is_a_clear_error():
    """precompute_fp8_all_gather_scales refuses a model FSDP2 has not set up, which it reads from
    FSDP2's private state; a torch whose state has another form gets an error naming it, not an
    AttributeError (nor a guess: a wrong one makes the ranks' collectives disagree)."""
    from types import SimpleNamespace

    from fp8dot.torch.fp8_all_gather import fsdp_has_set_up_its_shards

    def module(group):
        return SimpleNamespace(_get_fsdp_state=lambda: SimpleNamespace(_fsdp_param_group=group))

    assert fsdp_has_set_up_its_shards(module(None))  # no parameters of its own
    assert fsdp_has_set_up_its_shards(module(SimpleNamespace(_reset_sharded_params=True)))
    assert not fsdp_has_set_up_its_shards(module(SimpleNamespace(_reset_sharded_params=False)))
    with pytest.raises(RuntimeError, match=r"cannot tell whether FSDP2 has set up its shards in "
                                           r"torch .*_reset_sharded_params"):
        fsdp_has_set_up_its_shards(module(SimpleNamespace()))
    with pytest.raises(RuntimeError, match="fp8dot reads torch 2.11's FSDP2 state"):
        fsdp_has_set_up_its_shards(SimpleNamespace())
