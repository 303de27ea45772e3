#!/usr/bin/env python3
"""Fails when a file in src/, include/ or tools/ includes a header of a layer above its own.

The layers (DESIGN.md section 2), each allowed to use the ones listed and, through them, every
layer below those:

  core            status, dtypes and codecs, tensors, .npy, error metrics, memory ranges
  dot             PrecisionConfig and ResolveAccumulation, DotSpec, DotProblem, KSplit
  cpu, cuda       the backends (siblings: neither includes the other)
  dispatch        RunDot over the backends
  hlo             HLO IR, parser, verifier, the fused GEMM call's backend_config
  hlo_passes      the rewriter and other passes
  hlo_interpreter the interpreter and the device executor (siblings with the passes)
  c_api           the C entry point
  bindings        the framework bindings: src/bindings (requests -> DotSpecs), src/python (the
                  nanobind module), src/jax (the XLA FFI handlers), src/torch (the C++ torch
                  operators)
  tools           the CLI

Every public header is assigned to a layer below (HEADER_LAYERS): a new header must be added
there, so the rule cannot be dodged by a header the test does not know.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

USES = {
    "core": [],
    "dot": ["core"],
    "cpu": ["dot"],
    "cuda": ["dot"],
    "dispatch": ["cpu", "cuda"],
    "hlo": ["dot"],
    "hlo_passes": ["hlo"],
    "hlo_interpreter": ["hlo", "dispatch"],
    "c_api": ["cuda"],
    "bindings": ["dispatch"],
    "tools": ["hlo_passes", "hlo_interpreter", "dispatch"],
}

HEADER_LAYERS = {
    "core": ["status", "dtype", "float_codec", "tensor", "npy", "random", "error_metrics",
             "arithmetic", "file_writer", "memory_ranges"],
    "dot": ["precision", "dot_spec", "dot_arguments", "dot_problem", "k_split", "quantize"],
    "cpu": ["cpu_backend", "accumulator_model"],
    "cuda": ["cuda_device", "cuda_backend", "cuda_buffer"],
    "dispatch": ["run_dot"],
    "c_api": ["c_api"],
    "hlo": ["hlo/hlo_ir", "hlo/hlo_opcode", "hlo/hlo_parser", "hlo/hlo_verifier", "hlo/shape",
            "hlo/gemm_backend_config"],
    "hlo_passes": ["hlo/fp8_gemm_rewriter", "hlo/convert_round_trip_remover"],
    "hlo_interpreter": ["hlo/interpreter", "hlo/interpreter_value", "hlo/device_executor"],
}

INTERPRETER_SOURCES = ("interpreter", "device_executor", "gemm_call")


def allowed(layer):
    """The layers `layer` may include: itself and everything below it."""
    seen, stack = {layer}, [layer]
    while stack:
        for below in USES[stack.pop()]:
            if below not in seen:
                seen.add(below)
                stack.append(below)
    return seen


def layer_of_public_header(name):
    """`name` as included: "fp8dot/dot_spec.h" or "fp8dot/hlo/hlo_ir.h"."""
    stem = name[len("fp8dot/"):-len(".h")]
    for layer, stems in HEADER_LAYERS.items():
        if stem in stems:
            return layer
    return None


def layer_of_path(relative):
    """The layer of a file in the repository, by its folder (None: not checked)."""
    parts = relative.parts
    if parts[0] == "include":
        return layer_of_public_header("/".join(parts[1:]))
    if parts[0] == "tools":
        return "tools"
    if parts[0] != "src":
        return None
    if parts[1] == "hlo":
        if parts[2] == "passes":
            return "hlo_passes"
        return "hlo_interpreter" if parts[2].startswith(INTERPRETER_SOURCES) else "hlo"
    return {"core": "core", "dot": "dot", "cpu": "cpu", "cuda": "cuda", "dispatch": "dispatch",
            "c_api": "c_api", "bindings": "bindings", "python": "bindings",
            "jax": "bindings", "torch": "bindings"}.get(parts[1])


def layer_of_include(name):
    """The layer of an included project header, or None for a system/library header."""
    if name.startswith("fp8dot/"):
        return layer_of_public_header(name) or "unknown"
    first = name.split("/")[0]
    if first in ("core", "dot", "cpu", "cuda", "dispatch", "hlo", "c_api", "bindings", "python",
                 "jax", "torch"):
        return layer_of_path(pathlib.PurePosixPath("src", name))
    return None


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def violations(files):
    """(file, included header, why) for every include that looks up a layer."""
    found = []
    for path, text in files:
        layer = layer_of_path(path)
        if layer is None:
            if path.parts[0] == "include":
                found.append((path, "-", "public header without a layer in HEADER_LAYERS"))
            continue
        for name in INCLUDE.findall(text):
            target = layer_of_include(name)
            if target is None:
                continue
            if target == "unknown":
                found.append((path, name, "header without a layer in HEADER_LAYERS"))
            elif target not in allowed(layer):
                found.append((path, name, f"layer {layer} includes layer {target}"))
    return found


def repository_files():
    for folder in ("src", "include", "tools"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".h", ".cc", ".cu", ".cuh"):
                yield path.relative_to(ROOT), path.read_text()


def main():
    # The checker must see a violation when there is one.
    planted = [(pathlib.PurePosixPath("src/cuda/x.cc"), '#include "fp8dot/cpu_backend.h"\n'),
               (pathlib.PurePosixPath("src/hlo/interpreter.cc"),
                '#include "fp8dot/hlo/fp8_gemm_rewriter.h"\n'),
               (pathlib.PurePosixPath("src/dot/x.cc"), '#include "fp8dot/nowhere.h"\n')]
    if len(violations(planted)) != len(planted):
        print("layering_test: the checker missed a planted violation", file=sys.stderr)
        return 1
    files = list(repository_files())
    found = violations(files)
    for path, name, why in found:
        print(f"{path}: includes {name}: {why}", file=sys.stderr)
    print(f"layering: {len(files)} files checked, {len(found)} violations")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
