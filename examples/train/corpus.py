"""The training corpus: the Python standard library's own source files, read as bytes.

Every machine with Python has this corpus offline, nobody on this project wrote it, and it is
a few tens of megabytes of real, varied code. The file list is fixed by rules (below), sorted,
and hashed, so two runs that print the same SHA-256 trained on the same bytes. The standard
library differs between Python versions (3.11, 3.12, ...), so the hash is only comparable
between runs of the same Python version; it is printed with the version.

Tokens are bytes (vocabulary 256): no tokenizer to download, train or trust.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import sysconfig
from pathlib import Path

import torch

VOCAB_SIZE = 256

# Written after every file, so the model can learn where one file ends and the next begins. A
# NUL byte does not occur in Python source text, so it means only this.
END_OF_FILE = b"\x00"

# Every validation file is one of these out of this many, by position in the sorted list.
# Taking every 20th file (5%) rather than the last 5% spreads the validation set over the
# whole library: the sorted list groups files by package, so a tail split would validate only
# on the alphabetically last packages (xml, zipfile, zoneinfo).
VALIDATION_ONE_IN = 20

# Folders that are not hand-written Python source, or that differ between machines with the
# same Python version, so they would change the hash without changing the language:
EXCLUDED_FOLDERS = {
    "site-packages",  # whatever this machine has installed (torch, numpy, ...)
    "encodings",  # codec tables generated from Unicode mapping files
    "pydoc_data",  # generated documentation text
    "lib-dynload",  # compiled extension modules
    "__pycache__",
}
EXCLUDED_FOLDER_PREFIXES = ("config-",)  # the build's Makefile and config, per machine
EXCLUDED_FILE_PREFIXES = ("_sysconfigdata",)  # the build's paths and compiler flags, per machine

# The standard library's own test suite (Lib/test, Lib/idlelib/idle_test, ...) is also real,
# varied code, and it triples the corpus: about 30 MB with it, 9 MB without (3.12). The
# H200 run trains a 300M-parameter model on ~33M tokens, which is about one epoch with the
# tests and nearly four without them; a model that size starts to memorise a 9 MB corpus, and
# a validation loss that measures memorisation would blur the FP8-vs-BF16 comparison.
TEST_FOLDERS = {"test", "tests", "idle_test"}


@dataclasses.dataclass(frozen=True)
class Corpus:
    """The corpus split into a training and a validation byte stream."""

    train: torch.Tensor  # uint8, every training file's bytes followed by END_OF_FILE
    validation: torch.Tensor  # uint8, likewise for the validation files
    sha256: str  # of every file's bytes + END_OF_FILE, in sorted-path order
    train_files: int
    validation_files: int
    root: str
    python_version: str

    def describe(self) -> str:
        return (
            f"corpus: Python {self.python_version} standard library at {self.root}\n"
            f"corpus: {self.train_files + self.validation_files} files, "
            f"{len(self.train) + len(self.validation):,} bytes, sha256 {self.sha256}\n"
            f"corpus: train {self.train_files} files / {len(self.train):,} bytes, "
            f"validation {self.validation_files} files / {len(self.validation):,} bytes "
            f"(every {VALIDATION_ONE_IN}th file)"
        )


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def source_files(root: Path, with_tests: bool) -> list[Path]:
    """Every *.py file under the standard library folder that the rules above keep, sorted by
    its path relative to the root (a fixed order on every machine and file system)."""

    def kept(path: Path) -> bool:
        folders = path.relative_to(root).parts[:-1]
        if any(f in EXCLUDED_FOLDERS or f.startswith(EXCLUDED_FOLDER_PREFIXES) for f in folders):
            return False
        if not with_tests and any(f in TEST_FOLDERS for f in folders):
            return False
        return not path.name.startswith(EXCLUDED_FILE_PREFIXES)

    files = [p for p in root.rglob("*.py") if p.is_file() and kept(p)]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def load_corpus(with_tests: bool = True) -> Corpus:
    root = stdlib_root()
    files = source_files(root, with_tests)
    if len(files) < VALIDATION_ONE_IN:
        raise RuntimeError(f"only {len(files)} source files under {root}; is this a full Python?")
    digest = hashlib.sha256()
    train, validation = bytearray(), bytearray()
    for index, path in enumerate(files):
        data = path.read_bytes() + END_OF_FILE
        digest.update(data)
        (validation if index % VALIDATION_ONE_IN == VALIDATION_ONE_IN - 1 else train).extend(data)
    validation_files = len(files) // VALIDATION_ONE_IN
    as_tensor = lambda b: torch.frombuffer(b, dtype=torch.uint8)  # shares the bytearray's memory
    return Corpus(
        train=as_tensor(train),
        validation=as_tensor(validation),
        sha256=digest.hexdigest(),
        train_files=len(files) - validation_files,
        validation_files=validation_files,
        root=str(root),
        python_version=sys.version.split()[0],
    )


def random_batch(
    stream: torch.Tensor, batch_size: int, seq_len: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """batch_size windows of seq_len + 1 bytes at random offsets drawn from `generator` (on the
    CPU, so the batches are the same on every device): inputs and next-byte targets."""
    starts = torch.randint(0, len(stream) - seq_len - 1, (batch_size,), generator=generator)
    return _windows(stream, starts, seq_len)


def evaluation_batches(
    stream: torch.Tensor, batch_size: int, seq_len: int, batches: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The fixed validation set: batches * batch_size windows evenly spaced over the stream.
    It depends on neither the seed nor the step, so every run and every evaluation sees the
    same bytes and validation losses are comparable across runs."""
    windows = batches * batch_size
    last_start = len(stream) - seq_len - 1
    if last_start < windows:
        raise ValueError(f"validation stream of {len(stream)} bytes is too short for {windows} windows")
    starts = torch.linspace(0, last_start, windows).long()
    return [_windows(stream, s, seq_len) for s in starts.split(batch_size)]


def _windows(stream: torch.Tensor, starts: torch.Tensor, seq_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    offsets = starts[:, None] + torch.arange(seq_len + 1)
    window = stream[offsets].long()
    return window[:, :-1], window[:, 1:]
