"""fp8dot.torch's FP8 layers inside torch.distributed's engines, on 2 CPU processes (gloo, the CPU
backend): DDP, FSDP2 (fully_shard), tensor parallelism with torch's own ColwiseParallel and
RowwiseParallel, and torch.distributed.checkpoint. Each run is held against one process on the
same global batch (tests/python/distributed_runs.py runs both).

The bound for "equal" is the reordering of float32 sums (tolerances.accumulation_tolerance's
float32 case over the summed extent): the FP8 operands are the same bytes in both runs when the
scales agree, so what remains is where partial sums meet (DDP's and FSDP's gradient reductions,
row-parallel's partial outputs) and in what order.
"""

import contextlib
import functools
import os

import pytest

torch = pytest.importorskip("torch")
import torch.distributed  # noqa: E402

import distributed_runs as runs  # noqa: E402
import torchrun  # noqa: E402
from tolerances import (accumulation_tolerance, relative_frobenius,  # noqa: E402
                        requantisation_tolerance)

pytestmark = pytest.mark.skipif(
    not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
    reason="torch.distributed with gloo is not available in this torch build")

# Float32 reordering over the largest summed extent: the global batch's rows (wgrad, bias).
REORDERING = accumulation_tolerance("f32", runs.WORLD * runs.ROWS_PER_RANK)
# Row-parallel outputs differ by that reordering; their gradient's e5m2 cast then rounds a few
# elements the other way.
REQUANTISATION = requantisation_tolerance(REORDERING, torch.float8_e5m2)


two_gpus = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.device_count() < 2 or
    not torch.distributed.is_nccl_available(),
    reason="GPU test: needs 2 GPUs and NCCL (one rank per GPU)")


@pytest.fixture(scope="module", params=[pytest.param("cpu", id="cpu-gloo"),
                                        pytest.param("cuda", id="cuda-nccl", marks=two_gpus)])
def results(request, tmp_path_factory):
    """Every scenario of distributed_runs.py, run once on 2 processes: CPU processes with gloo,
    or one GPU each with NCCL. Its "device" is the one the references run on."""
    device = request.param
    out = tmp_path_factory.mktemp(f"distributed-{device}")
    torchrun.run([runs.__file__, str(out)], runs.WORLD, out / "logs", timeout=900,
                 env={**os.environ, "OMP_NUM_THREADS": "1", "FP8DOT_DISTRIBUTED_DEVICE": device})
    loaded = torch.load(out / "results.pt", weights_only=False)
    loaded["device"] = device
    return loaded


@contextlib.contextmanager
def reference_device(device: str):
    """distributed_runs' model and data on `device` in this process (the references)."""
    saved, runs.DEVICE = runs.DEVICE, device
    try:
        yield
    finally:
        runs.DEVICE = saved


@functools.lru_cache(maxsize=None)
def _single_process(recipe_name: str, device: str) -> dict:
    with reference_device(device):
        return runs.single_process(recipe_name)


def single_process(recipe_name: str, results: dict) -> dict:
    """One process on the global batch, on the device the 2-process run took."""
    return _single_process(recipe_name, results["device"])


def local(tensor):
    """A tensor-parallel buffer (a replicated DTensor) as a plain tensor."""
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def assert_gradients_close(actual: dict, expected: dict, bound: float) -> None:
    for step, (got, want) in enumerate(zip(actual["grads"], expected["grads"])):
        assert len(got) == len(want) == 4
        for index, (g, w) in enumerate(zip(got, want)):
            error = relative_frobenius(g, w)
            assert error <= bound, f"step {step}, parameter {index}: {error:.2e} > {bound:.2e}"


@pytest.mark.parametrize("recipe_name", runs.DATA_PARALLEL_RECIPES)
@pytest.mark.parametrize("wrapper", ["ddp", "fsdp2"])
def test_data_parallel_losses_and_gradients_equal_one_process(results, wrapper, recipe_name):
    run, reference = results[(wrapper, recipe_name)], single_process(recipe_name, results)
    for got, want in zip(run["loss"], reference["loss"]):
        assert abs(got.item() - want.item()) <= REORDERING * abs(want.item())
    assert_gradients_close(run, reference, REORDERING)


@pytest.mark.parametrize("wrapper", ["ddp", "fsdp2"])
def test_data_parallel_delayed_histories_agree_across_ranks_and_with_one_process(results,
                                                                                 wrapper):
    run, reference = results[(wrapper, "delayed")], single_process("delayed", results)
    first, second = run["histories_per_rank"]
    assert len(first) == 2
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    for got, want in zip(first, reference["histories"]):
        # X and W: the same amaxes. dY: each rank's loss is the mean over half the rows, so its
        # gradient is exactly twice the single process's (a power of two: the same FP8 bytes).
        assert torch.equal(got[:2], want[:2])
        assert torch.equal(got[2], 2 * want[2])
        assert (got[:, :runs.STEPS] > 0).all()


def test_without_the_amax_reduction_data_parallel_gradients_differ(results):
    """The control: ranks casting with their own scales quantise differently from the single
    process (its second rank's rows are 4x larger), by FP8's quantisation error, not rounding."""
    run = results[("ddp", "tensorwise", "no reduction")]
    reference = single_process("tensorwise", results)
    errors = [relative_frobenius(g, w) for step_got, step_want in
              zip(run["grads"], reference["grads"]) for g, w in zip(step_got, step_want)]
    assert max(errors) > 100 * REORDERING
    assert max(errors) < 0.25  # e5m2's unit roundoff 2^-3, averaged over the GEMMs' sums


@pytest.mark.parametrize("recipe_name", runs.TENSOR_PARALLEL_RECIPES)
def test_tensor_parallel_gradients_equal_one_process(results, recipe_name):
    """Column- then row-parallel, promoted everywhere: the row-parallel output, summed over K
    halves, differs from the whole K's by float32 reordering, and so does its gradient, whose
    e5m2 cast may round a few elements the other way (REQUANTISATION)."""
    run, reference = results[("tp", recipe_name)], single_process(recipe_name, results)
    for got, want in zip(run["loss"], reference["loss"]):
        assert abs(got.item() - want.item()) <= REORDERING * abs(want.item())
    assert_gradients_close(run, reference, REQUANTISATION)
    for got, want in zip(run["histories"], reference["histories"]):
        assert torch.equal(local(got), want)


def test_explain_lists_each_tensor_parallel_layers_shard_gemms(results):
    """Each rank's GEMMs are its shard's: column-parallel Linear(256, 512) multiplies W's 256
    rows of 512, row-parallel Linear(512, 256) W's 256 columns."""
    lines = results[("tp", "blocks")]["explain"].splitlines()
    rows = {tuple(line.split()[:5]) for line in lines[2:]}
    assert ("0", "(column-parallel", "over", "2)", "forward") in rows
    forward = {line.split()[0]: line.split()[5] for line in lines[2:] if "forward" in line}
    m = runs.WORLD * runs.ROWS_PER_RANK
    assert forward == {"0": f"{m}×{runs.HIDDEN // 2}×{runs.FEATURES}",
                       "2": f"{m}×{runs.FEATURES}×{runs.HIDDEN // 2}"}
    assert "2 (row-parallel over 2)" in results[("tp", "blocks")]["explain"]


def test_tensor_parallel_fast_forward_is_within_fast_accumulation_of_one_process(results):
    """The seed's forward is fast: row-parallel sums K in two halves, each with the fast
    accumulator's error, where one process sums it whole. Same FP8 operands (the scales agree),
    so the two differ by at most both errors."""
    with torch.no_grad(), reference_device(results["device"]):
        reference = runs.model("tensorwise")(runs.global_batch(0)[0]).cpu()
    error = relative_frobenius(local(results[("tp forward", "tensorwise")]), reference)
    assert 0 < error <= 2 * accumulation_tolerance("fp8-fast", runs.HIDDEN)


def test_tensor_parallel_refuses_what_it_cannot_shard(results):
    refusals = results["refusals"]
    assert "rowwise scaling under tensor parallelism" in refusals["rowwise"]
    assert "column-parallel block scaling over 2 shards needs out_features a multiple of " \
           "128 x 2" in refusals["blocks 384"]
    assert "got 384" in refusals["blocks 384"]
    assert refusals["blocks 512"] == ""


def test_a_rank_without_rows_joins_the_reductions(results):
    """DDP, delayed scaling, rank 1 without rows in the second step: the run finishes (its
    peers' amax reductions got its zeros), and the gradients and histories are those of one
    process on the rows there are."""
    with reference_device(results["device"]):
        reference = runs.empty_rank_reference("delayed")
    run = results[("empty rank", "delayed")]
    # DDP averages the ranks' gradients of their sums: half the one process's of the whole sum.
    halved = {"grads": [[g / runs.WORLD for g in step] for step in reference["grads"]]}
    assert_gradients_close(run, halved, REORDERING)
    for got, want in zip(run["histories"], reference["histories"]):
        assert torch.equal(got, want)


def test_a_checkpoint_resumes_bit_identically(results):
    """FSDP2 with delayed scaling, saved by torch.distributed.checkpoint after two steps: the
    resumed model's third step is the uninterrupted one's, histories included."""
    checkpoint = results["checkpoint"]
    assert all(torch.equal(a, b) for a, b in zip(checkpoint["continued"], checkpoint["resumed"]))
    continued, resumed = checkpoint["histories"]
    assert len(continued) == 2
    assert all(torch.equal(a, b) for a, b in zip(continued, resumed))


def test_the_amax_reduction_compiles_into_the_graph(results):
    """torch.compile(fullgraph=True) of a layer with the reduction: no graph break, and the
    compiled output and weight gradient are the eager ones, bit for bit."""
    eager, compiled = results["compiled"]["eager"], results["compiled"]["compiled"]
    assert torch.equal(eager[0], compiled[0]) and torch.equal(eager[1], compiled[1])


@pytest.mark.parametrize("param_dtype", [None, torch.bfloat16, "uneven", "delayed"],
                         ids=["float32", "bf16 params", "padded shards", "delayed scaling"])
def test_fp8_all_gather_trains_bit_identically_to_the_plain_all_gather(results, param_dtype):
    """Each shard cast with the whole weight's scale is the whole weight's cast: the same FP8
    bytes reach the GEMMs, so 3 AdamW steps give the same losses and weights, bit for bit; also
    where FSDP2 pads a shard, where a rank holds no row of a weight, and under delayed scaling,
    whose histories (the weight's amax recorded in the backward instead of the forward) end
    equal too."""
    plain = results[("fp8 all-gather", False, param_dtype)]
    fp8 = results[("fp8 all-gather", True, param_dtype)]
    assert fp8["local_type"] == "Fp8AllGatherWeight" and plain["local_type"] == "Tensor"
    assert fp8["explain"].count("(W gathered in FP8)") == 6 and "gathered" not in plain["explain"]
    assert [loss.item() for loss in fp8["loss"]] == [loss.item() for loss in plain["loss"]]
    assert all(torch.equal(a, b) for a, b in zip(fp8["weights"], plain["weights"]))
    assert len(fp8["weights"]) == 4
    assert len(fp8["histories"]) == (2 if param_dtype == "delayed" else 0)
    assert all(torch.equal(a, b) for a, b in zip(fp8["histories"], plain["histories"]))


def test_delayed_scaling_gathers_with_the_histories_scales(results):
    """The delayed FP8 gather casts with the history's scale from the second step on (3 AdamW
    steps at lr 1e-2 move the weights' amaxes, so the history's scale is not the current one):
    its losses differ from the tensorwise FP8 gather's after the first step, and its histories
    hold every step's weight amax (nonzero in the last 3 of 4 slots)."""
    delayed = results[("fp8 all-gather", True, "delayed")]
    tensorwise = results[("fp8 all-gather", True, None)]
    assert delayed["loss"][0].item() == tensorwise["loss"][0].item()
    assert delayed["loss"][2].item() != tensorwise["loss"][2].item()
    for history in delayed["histories"]:
        assert (history[1, :3] > 0).all() and history[1, 3] == 0
        assert len(set(history[1, :3].tolist())) == 3  # the weights changed every step


def test_fp8_all_gather_compiles(results):
    """Under torch.compile (as examples/train runs FSDP2): the same losses and weights as the
    eager plain all-gather, and the weights still gathered in FP8."""
    eager = results[("fp8 all-gather", False, None)]
    compiled = results[("fp8 all-gather", True, "compiled")]
    assert [loss.item() for loss in compiled["loss"]] == [loss.item() for loss in eager["loss"]]
    assert all(torch.equal(a, b) for a, b in zip(compiled["weights"], eager["weights"]))
    assert [b for _, b in compiled["all_gathers"]] == _expected_all_gathers(1, 4)


def _expected_all_gathers(weight_bytes: int, bias_bytes: int) -> list:
    """Every all-gather of 3 steps, one rank's input: each layer's shard of the weight (half its
    rows) and of the bias, gathered before its forward and again before its backward (FSDP2
    frees a non-root module's weights after the forward)."""
    first = (runs.HIDDEN // runs.WORLD) * runs.FEATURES  # Linear(256 -> 512): 256 rows a rank
    second = (runs.FEATURES // runs.WORLD) * runs.HIDDEN  # Linear(512 -> 256): 128 rows
    gathers = [first * weight_bytes + runs.HIDDEN // runs.WORLD * bias_bytes,
               second * weight_bytes + runs.FEATURES // runs.WORLD * bias_bytes]
    return (gathers + gathers[::-1]) * runs.STEPS


@pytest.mark.parametrize("param_dtype", [None, torch.bfloat16], ids=["float32", "bf16 params"])
def test_fp8_all_gather_sends_one_byte_a_weight_element(results, param_dtype):
    plain = results[("fp8 all-gather", False, param_dtype)]
    fp8 = results[("fp8 all-gather", True, param_dtype)]
    element = 4 if param_dtype is None else 2
    assert [b for _, b in plain["all_gathers"]] == _expected_all_gathers(element, element)
    assert {dtype for dtype, _ in plain["all_gathers"]} == {param_dtype or torch.float32}
    # The bias is gathered as FSDP2 gathers it; the weight in FP8, as bytes.
    assert [b for _, b in fp8["all_gathers"]] == _expected_all_gathers(1, element)
    assert {dtype for dtype, _ in fp8["all_gathers"]} == {torch.uint8}
    ratio = sum(b for _, b in plain["all_gathers"]) / sum(b for _, b in fp8["all_gathers"])
    assert ratio == pytest.approx(3.97 if param_dtype is None else 1.99, abs=0.01)
    # The weight's amax is reduced at each of its gathers (forward and backward).
    assert fp8["amax_reductions"] - plain["amax_reductions"] == len(fp8["all_gathers"])
    assert plain["amax_reductions"] == 2 * 2 * runs.STEPS  # X and dY of each layer


@pytest.mark.parametrize("param_dtype", [None, torch.bfloat16], ids=["float32", "bf16 params"])
def test_fp8_all_gather_keeps_no_weight_copy_between_forward_and_backward(results, param_dtype):
    """With the plain all-gather a layer keeps its weight's FP8 transpose from the forward for
    dgrad (one byte an element, whatever FSDP2 frees); gathered in FP8 it keeps a view of the
    gathered bytes, which FSDP2 frees after the forward and gathers again for the backward. The
    second layer is the one with dgrad (the first one's input needs no gradient)."""
    plain = results[("fp8 all-gather", False, param_dtype)]
    fp8 = results[("fp8 all-gather", True, param_dtype)]
    # The FP8 run's layers reach the gathered weight through their autograd context instead of
    # saving its bytes and 4-byte scale: the scales' bytes come off its count too.
    difference = plain["saved_bytes_held"] - fp8["saved_bytes_held"]
    assert 0 <= difference - runs.HIDDEN * runs.FEATURES <= 2 * 4


@pytest.mark.parametrize("recipe_name", runs.DATA_PARALLEL_RECIPES)
def test_fsdp2_casting_the_weight_transpose_again_is_the_same_run_and_keeps_no_copy(
        results, recipe_name):
    """recompute_weight_transpose under FSDP2: dgrad casts Wᵀ again from the weight FSDP2
    gathers again for the backward. Every loss, gradient and history equals the run that keeps
    Wᵀ, and the forward keeps W's bytes fewer: the second layer's (the one with dgrad)."""
    keep, again = results[("fsdp2", recipe_name)], results[("fsdp2", recipe_name, "recompute")]
    assert all(torch.equal(a, b) for a, b in zip(again["loss"], keep["loss"]))
    for got, want in zip(again["grads"], keep["grads"]):
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    for got, want in zip(again["histories_per_rank"], keep["histories_per_rank"]):
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    assert keep["fp8_bytes_kept"] - again["fp8_bytes_kept"] == runs.HIDDEN * runs.FEATURES


def test_tensor_parallel_casting_the_weight_transpose_again_is_the_same_run(results):
    """Each rank casts its shard's Wᵀ again, its tensorwise scale from the amax reduced over
    the shards once more in the backward: the same run to the bit."""
    keep = results[("tp", "tensorwise promoted")]
    again = results[("tp", "tensorwise promoted", "recompute")]
    assert all(torch.equal(a, b) for a, b in zip(again["loss"], keep["loss"]))
    for got, want in zip(again["grads"], keep["grads"]):
        assert all(torch.equal(local(g), local(w)) for g, w in zip(got, want))


@pytest.mark.parametrize("variant", [None, torch.bfloat16, "uneven", "delayed"],
                         ids=["float32", "bf16 params", "uneven", "delayed"])
def test_precomputed_all_gather_scales_train_bit_identically_with_one_reduction_a_step(
        results, variant):
    """precompute_fp8_all_gather_scales after the first step's optimizer step: the same losses,
    weights and histories as reducing at every gather, the same bytes gathered; the weight
    amaxes reduced once (both weights together) for the second step, and at each gather (2
    weights x forward and backward) in the first step and in the third, whose weights the
    second step's optimizer wrote. X and dY are reduced as before, 2 layers x 2 a step."""
    plain = results[("fp8 all-gather", True, variant)]
    run = results[("fp8 all-gather", True, variant, "precompute")]
    assert all(torch.equal(a, b) for a, b in zip(run["loss"], plain["loss"]))
    assert all(torch.equal(a, b) for a, b in zip(run["weights"], plain["weights"]))
    assert all(torch.equal(a, b) for a, b in zip(run["histories"], plain["histories"]))
    assert run["all_gathers"] == plain["all_gathers"]
    activations = 2 * 2 * runs.STEPS
    assert plain["amax_reductions"] == activations + 2 * 2 * runs.STEPS
    assert run["amax_reductions"] == activations + 1 + 2 * 2 * (runs.STEPS - 1)


def test_precompute_refuses_models_it_has_nothing_to_do_for(results):
    refusals = results["precompute refusals"]
    assert "has no weight that FSDP2 gathers in FP8" in refusals["none"]
    assert "not sharded yet; call it after fully_shard" in refusals["not sharded"]
    assert "FSDP2 has not run this model yet" in refusals["not run"]


def test_an_fp8_all_gather_checkpoint_loads_into_either_kind_of_model(results):
    """torch.distributed.checkpoint saves the weights' own values: a model gathered in FP8 and
    one gathered in float32 load the same weights from it."""
    run = results[("fp8 all-gather", True, None)]
    for fp8 in (True, False):
        assert all(torch.equal(a, b) for a, b in zip(run[f"loaded, fp8 {fp8}"], run["weights"]))


def test_cached_weights_refuses_an_fsdp2_model(results):
    """FSDP2 gathers each weight into the same memory every forward and the optimizer updates
    the shards invisibly to the cache: cached copies would go stale after a step (checked by
    hand: the third step's loss differed), so the context refuses sharded weights."""
    message = results["cached_weights refusal"]
    assert "layer '0' has a sharded weight" in message and "FSDP2" in message


def test_an_amax_reduction_group_that_is_not_a_process_group_is_refused():
    import fp8dot.torch as ft
    layer = ft.Linear(8, 8, amax_reduction_group="world")
    with pytest.raises(TypeError, match="amax_reduction_group must be a torch.distributed "
                                        "ProcessGroup .*got 'world'"):
        layer(torch.randn(2, 8))
