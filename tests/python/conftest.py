"""Shared fixtures: random FP8 test data, the fp64 references and the error bounds the tests
assert (derived from the formats' rounding and the accumulation mode, tolerances.py)."""

import zlib

import pytest

torch = pytest.importorskip("torch")
import fp8dot  # noqa: E402


def pytest_report_header(config):
    device = fp8dot.cuda_device()
    return (f"fp8dot {fp8dot.__version__}, CUDA backend built: {fp8dot.cuda_built}, "
            f"GPU: {device or 'none (' + fp8dot.cuda_unavailable_reason() + ')'}")


gpu = pytest.mark.skipif(fp8dot.cuda_device() is None or not torch.cuda.is_available(),
                         reason="GPU test: no Hopper GPU with the CUDA backend here")

# The devices every behaviour is tested on: the CPU always, the GPU where there is one (skipped,
# visibly, elsewhere).
DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=gpu)]


@pytest.fixture(autouse=True)
def _seed_global_random_state(request):
    """Each test starts from its own fixed global torch seed (derived from its name), so data a
    test draws without a generator does not depend on which tests ran before it."""
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))
