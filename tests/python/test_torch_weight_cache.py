"""fp8dot.torch.cached_weights: each layer's weight is quantised once per context while it is
unchanged, with the bits of quantising it every forward."""

from __future__ import annotations

import contextlib
import copy

import pytest

torch = pytest.importorskip("torch")

import fp8dot.torch as ft  # noqa: E402
from conftest import DEVICES  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


def generator(seed):
    return torch.Generator().manual_seed(seed)


class QuantizedInputs(TorchDispatchMode):
    """The data pointers of the tensors torch.ops.fp8dot.quantize is called on."""

    def __init__(self):
        super().__init__()
        self.pointers = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.fp8dot.quantize.default:
            self.pointers.append(args[0].data_ptr())
        return func(*args, **(kwargs or {}))


def make_model(device, recipe=None):
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Linear(136, 200), torch.nn.GELU(),
                                torch.nn.Linear(200, 72)).to(device)
    return ft.convert(model, recipe or ft.Recipe.seed())


def micro_batches(device, count=3):
    return [((torch.randn(40, 136, generator=generator(70 + i)) * 2).to(device).requires_grad_(),
             torch.randn(40, 72, generator=generator(80 + i)).to(device)) for i in range(count)]


def train(model, batches, cached: bool):
    """Forward and backward of every micro-batch (gradients accumulate); the weight
    quantisations seen, and what came out."""
    outputs = []
    with QuantizedInputs() as seen:
        with ft.cached_weights(model) if cached else contextlib.nullcontext():
            for x, dy in batches:
                y = model(x)
                y.backward(dy)
                outputs.append((y.detach(), x.grad))
    weights = {layer.weight.data_ptr() for layer in (model[0], model[2])}
    return sum(pointer in weights for pointer in seen.pointers), outputs


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("recipe", [ft.Recipe.seed(), ft.Recipe.deepseek_blocks()],
                         ids=["seed", "blocks"])
def test_each_weight_is_quantised_once_with_the_same_bits(device, recipe):
    batches = micro_batches(device)
    every_time, cached = make_model(device, recipe), make_model(device, recipe)
    calls_every_time, expected = train(every_time, copy.deepcopy(batches), cached=False)
    calls_cached, got = train(cached, batches, cached=True)
    assert calls_every_time == 2 * len(batches) and calls_cached == 2
    for (y, dx), (y_cached, dx_cached) in zip(expected, got):
        assert torch.equal(y, y_cached) and torch.equal(dx, dx_cached)
    for a, b in zip(every_time.parameters(), cached.parameters()):
        assert torch.equal(a.grad, b.grad)
    assert all(layer.weight_cache is None for layer in (cached[0], cached[2]))  # dropped on exit


@pytest.mark.parametrize("device", DEVICES)
def test_an_in_place_update_is_quantised_again(device):
    """optimizer.step() inside the context bumps the weights' versions: the next forward
    quantises them anew and gives what a model that never cached gives."""
    model, reference = make_model(device), make_model(device)
    (x, dy), (x2, _) = micro_batches(device, 2)
    with ft.cached_weights(model):
        for net in (model, reference):
            net(x).backward(dy)
            torch.optim.SGD(net.parameters(), lr=0.5).step()
        with QuantizedInputs() as seen, torch.no_grad():
            y = model(x2)
        assert model[0].weight.data_ptr() in seen.pointers
        with torch.no_grad():
            assert torch.equal(y, reference(x2))


@pytest.mark.parametrize("device", DEVICES)
def test_inference_then_training_adds_the_transpose(device):
    """A no-grad forward caches the weight without its dgrad transpose; a later forward that
    needs it quantises again (once) and the backward pass gets the right gradient."""
    model, reference = make_model(device), make_model(device)
    (x, dy), = micro_batches(device, 1)
    x_reference = x.detach().clone().requires_grad_()
    with ft.cached_weights(model):
        with torch.no_grad():
            model(x)
        with QuantizedInputs() as seen:
            model(x).backward(dy)
            model(x.detach().requires_grad_()).backward(dy)
    weights = {model[0].weight.data_ptr(), model[2].weight.data_ptr()}
    assert sum(pointer in weights for pointer in seen.pointers) == 2  # once each, with qᵀ
    reference(x_reference).backward(dy)
    reference(x_reference.detach().requires_grad_()).backward(dy)
    assert torch.equal(x.grad, x_reference.grad)
    assert torch.equal(model[0].weight.grad, reference[0].weight.grad)


def test_contexts_nest_and_delayed_scaling_in_training_is_refused():
    model = make_model("cpu")
    with ft.cached_weights(model):
        outer = model[0].weight_cache
        with ft.cached_weights(model):
            assert model[0].weight_cache is outer
        assert model[0].weight_cache is outer  # the inner exit keeps the outer copies
    assert model[0].weight_cache is None
    delayed = make_model("cpu", ft.Recipe.seed(scaling="delayed"))
    with pytest.raises(ValueError, match="'0' uses delayed scaling in training mode"):
        with ft.cached_weights(delayed):
            pass
    assert delayed[0].weight_cache is None


def test_delayed_scaling_in_eval_mode_reuses_its_weights_until_the_history_changes():
    """Inference from a delayed-scaling checkpoint: in eval mode the history is fixed, so each
    weight is quantised once (with the history's scale) and the bits are those of quantising
    every call; a layer switched to training inside the context records and quantises every
    call, and a changed history (a new scale) makes the next eval call quantise again."""
    model = make_model("cpu", ft.Recipe.seed(scaling="delayed"))
    (x, dy), = micro_batches("cpu", 1)
    model(x).backward(dy)  # one training step: the histories hold amaxes
    model.eval()
    with torch.no_grad():
        expected = model(x)
    with QuantizedInputs() as seen, torch.no_grad(), ft.cached_weights(model):
        outputs = [model(x) for _ in range(3)]
    weights = {model[0].weight.data_ptr(), model[2].weight.data_ptr()}
    assert sum(pointer in weights for pointer in seen.pointers) == 2  # once per layer
    assert all(torch.equal(out, expected) for out in outputs)
    with QuantizedInputs() as seen, ft.cached_weights(model):
        model(x)
        model.train()
        history = model[0].amax_history.clone()
        model(x).backward(dy)  # training inside the context: quantised, recorded
        model(x).backward(dy)
        assert not torch.equal(model[0].amax_history, history)
        model.eval()
        with torch.no_grad():
            after = model(x)  # the history moved: quantised again, with the new scale
    assert sum(pointer in weights for pointer in seen.pointers) == 2 + 2 * 2 + 2
    with torch.no_grad():
        assert torch.equal(after, model(x))


def test_compiled_model_inside_the_context_quantises_every_call():
    """torch.compile(fullgraph=True) traces the layer as always (the cache is not read in a
    compiled graph) and gives the eager model's bits."""
    model = make_model("cpu")
    compiled = torch.compile(model, fullgraph=True)
    (x, _), = micro_batches("cpu", 1)
    with torch.no_grad(), ft.cached_weights(model):
        assert torch.equal(compiled(x), model(x))
        assert model[0].weight_cache  # the eager call filled it


def test_a_new_weight_at_a_freed_weights_address_is_quantised_again():
    """The copies belong to the weight tensor itself, not to its address: a weight replaced
    inside the context by a new tensor at the same version (0) that the allocator placed where
    the old one was (it frees a block and hands it out again) is quantised again. Tried 20
    times (the test prints how often the address came back: 3 times on the development
    machine, where the cache keyed by address alone served a stale copy at the first)."""
    layer = ft.Linear(64, 32)
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(3))
    reused = 0
    with torch.no_grad(), ft.cached_weights(layer):
        for attempt in range(20):
            layer.weight = torch.nn.Parameter(torch.randn(32, 64))
            layer(x)
            address = layer.weight.data_ptr()
            del layer.weight
            layer.weight = torch.nn.Parameter(torch.randn(32, 64) * 3)
            reused += layer.weight.data_ptr() == address
            assert layer.weight._version == 0
            cached = layer(x)
            fresh = copy.deepcopy(layer)
            fresh.weight_cache = None  # quantises every call
            assert torch.equal(cached, fresh(x)), f"attempt {attempt}: a stale copy"
    print(f"the freed address came back in {reused} of 20 attempts")


def test_an_optimizer_step_that_bumps_no_version_drops_the_copies():
    """torch's fused AdamW writes the weights without bumping their version (checked: the
    foreach and for-loop ones do bump it); every torch.optim step drops the copies, so the next
    forward casts the stepped weights, as a model that never cached does."""
    torch.manual_seed(5)
    cached = ft.Linear(64, 32)
    reference = copy.deepcopy(cached)
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(6))
    optimizers = [torch.optim.AdamW(layer.parameters(), lr=0.1, fused=True)
                  for layer in (cached, reference)]
    with ft.cached_weights(cached):
        for step in range(3):
            for layer, optimizer in zip((cached, reference), optimizers):
                version = layer.weight._version
                output = layer(x)
                output.square().mean().backward()
                optimizer.step()
                optimizer.zero_grad()
                assert layer.weight._version == version  # the fused step bumped nothing
            assert torch.equal(cached(x), reference(x)), f"step {step}: a stale copy"
