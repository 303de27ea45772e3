"""The training example's scripts (examples/train/) run as the tests run them: the tiny config on
the CPU, one subprocess per run with the real command line, read back from its --log file.
test_train_example.py runs train.py (torch), test_train_flax_example.py train_flax.py (JAX)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fp8dot
import torchrun

TRAIN_DIR = Path(__file__).resolve().parents[2] / "examples" / "train"

# How far the tiny run's training and validation losses must fall over its 30 steps, in nats,
# in either framework. It starts at about ln 256 = 5.55 (a uniform guess over bytes); over 30
# steps it falls by 2.3 to 2.4 nats (torch, seeds 0, 1, 2 on the CPU: 5.62 -> 3.29,
# 5.56 -> 3.19, 5.54 -> 3.13, the last 3 steps' mean; JAX in test_train_flax_example.py). 1.5
# nats leaves 0.8 for other CPUs' kernels and thread counts, and is still far beyond what a run
# that does not learn (no update, a wrong gradient, a broken schedule) can reach by noise: one
# step's loss varies by about 0.1.
REQUIRED_DROP_NATS = 1.5


def run_script(script: str, tmp_path: Path, name: str, *extra: str,
               threads: int = 2, processes: int = 1) -> list[dict]:
    """Runs `script` with the tiny config, seed 0, on the CPU (plus `extra` flags) with `threads`
    intra-op threads, in `processes` processes started by torchrun (rank 0 logs); its
    records."""
    log = tmp_path / f"{name}.jsonl"
    arguments = [str(TRAIN_DIR / script), "--config", "tiny", "--device", "cpu", "--seed", "0",
                 "--log", str(log), *extra]
    # A fixed thread count. Bit-identical repeats hold for one thread: on the 16-core GPU
    # machine two bf16 runs differed at step 2 (in the 6th digit) with two threads, and with
    # torch's default thread count.
    # The subprocess runs in the example's folder: it finds the fp8dot these tests import
    # through an absolute path (a relative PYTHONPATH would point elsewhere from there).
    package_root = str(Path(fp8dot.__file__).resolve().parents[1])
    python_path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": python_path}
    if processes > 1:
        torchrun.run(arguments, processes, tmp_path / f"{name}-logs", env=env, cwd=TRAIN_DIR,
                     timeout=300)
    else:
        command = [sys.executable, *arguments]
        result = subprocess.run(command, cwd=TRAIN_DIR, capture_output=True, text=True,
                                timeout=300, env=env)
        assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return [json.loads(line) for line in log.read_text().splitlines()]


def of_type(records: list[dict], kind: str) -> list[dict]:
    return [r for r in records if r["type"] == kind]
