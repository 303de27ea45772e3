"""Multi-process runs for the tests: torchrun (torch.distributed.run) with each rank's output in
its own file, so that a failure shows what the rank that failed printed first.

Without this a crashed rank leaves little to read: torchrun interleaves the ranks' output, the
ranks that survive print long tracebacks of the lost connection, and a segmentation fault prints
nothing at all. Here every rank runs with Python's fault handler on (a crash prints the Python
stack of every thread) and the failure message gives each rank's own last lines.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path


def run(script: list[str], processes: int, log_dir: Path, *, env: dict | None = None,
        cwd: Path | None = None, timeout: float) -> subprocess.CompletedProcess:
    """`script` (a path and its arguments) in `processes` ranks; asserts that every rank exited
    with 0, naming each rank's exit and the end of its stderr where one did not."""
    log_dir.mkdir(parents=True, exist_ok=True)
    # "--": torchrun's own parser would take a script's --log for its --log-dir.
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={processes}", "--redirects=3", f"--log-dir={log_dir}",
               "--", *script]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=cwd, env={**(env or os.environ), "PYTHONFAULTHANDLER": "1"}) as agent:
        try:
            stdout, stderr = agent.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # torchrun starts each rank in a session of its own: killing torchrun alone would
            # leave them running (or waiting in a collective) beside the tests that follow.
            # SIGTERM has torchrun stop its ranks first.
            agent.send_signal(signal.SIGTERM)
            try:
                stdout, stderr = agent.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                agent.kill()
                stdout, stderr = agent.communicate()
            done = subprocess.CompletedProcess(command, agent.returncode, stdout, stderr)
            raise AssertionError(f"timed out after {timeout} s\n" +
                                 failure_report(command, done, log_dir)) from None
    done = subprocess.CompletedProcess(command, agent.returncode, stdout, stderr)
    assert done.returncode == 0, failure_report(command, done, log_dir)
    return done


def failure_report(command: list[str], done: subprocess.CompletedProcess, log_dir: Path) -> str:
    """The command, torchrun's own summary (which rank failed first, with which signal) and the
    last lines each rank wrote to stderr."""
    parts = [" ".join(command) + f" exited with {done.returncode}",
             "torchrun: " + done.stderr[-2500:]]
    for stderr in sorted(log_dir.rglob("stderr.log")):
        rank = stderr.parent.name
        parts.append(f"---- rank {rank} stderr (last lines) ----\n" +
                     stderr.read_text(errors="replace")[-4000:])
    return "\n".join(parts)
