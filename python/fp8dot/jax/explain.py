"""fp8dot.jax.explain: the FP8 GEMMs of a jitted function and the accumulation each resolves to.

Reads the program JAX lowers (StableHLO): every fp8dot_scaled_dot custom call, and every
dot_general XLA itself would run on FP8 operands, with operand types, output, precision and
ResolveAccumulation's answer — what will run, not what the Python code meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import jax

from .. import resolve_accumulation

_MLIR_TYPES = {"f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2", "bf16": "bfloat16",
               "f16": "float16", "f32": "float32", "f64": "float64"}
_TENSOR = r"tensor<([0-9x]*?)x?(f8E4M3FN|f8E5M2|bf16|f16|f32|f64)>"
_CUSTOM_CALL = re.compile(
    r"stablehlo\.custom_call @fp8dot_scaled_dot\((?P<operands>[^)]*)\)\s*\{(?P<attributes>.*?)\}\s*:"
    r"\s*\((?P<types>[^)]*)\)\s*->\s*(?P<results>.*)$", re.MULTILINE)
_DOT_GENERAL = re.compile(
    r"stablehlo\.dot_general\s+(?P<operands>[^,]+,\s*[^,]+),(?P<attributes>.*?):\s*"
    r"\((?P<types>[^)]*)\)\s*->\s*(?P<results>.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Fp8Gemm:
    engine: str  # "fp8dot" (the custom call) or "xla" (a dot_general XLA lowers itself)
    lhs: str  # "float8_e4m3fn[64,128]"
    rhs: str
    output: str
    precision: tuple[str, str]
    accumulation: str  # ResolveAccumulation's answer
    scales: str  # "tensor x tensor", or "" for XLA's dots
    algorithm: str = ""  # a dot algorithm, which overrides the precision ("" where none)

    def __str__(self):
        scales = f", scales {self.scales}" if self.scales else ""
        algorithm = f", algorithm {self.algorithm}" if self.algorithm else ""
        return (f"{self.engine}: {self.lhs} x {self.rhs} -> {self.output}, precision "
                f"{self.precision[0]},{self.precision[1]}{algorithm}: {self.accumulation}"
                f"{scales}")


def _types(text: str) -> list[tuple[str, str]]:
    return [(_MLIR_TYPES[dtype], dims.replace("x", ",")) for dims, dtype in
            re.findall(_TENSOR, text)]


def _attribute(attributes: str, name: str) -> str:
    match = re.search(rf'\b{name} = "([^"]*)"', attributes)
    return match.group(1) if match else ""


def _xla_precision(attributes: str) -> tuple[str, str]:
    """A dot_general's PrecisionConfig: `precision = [DEFAULT, HIGHEST]` as StableHLO prints it,
    or `#stablehlo<precision HIGHEST>` per operand in the attribute form; DEFAULT when absent."""
    printed = re.search(r"\bprecision = \[(\w+), (\w+)\]", attributes)
    if printed:
        return printed.group(1), printed.group(2)
    named = re.findall(r"#stablehlo<precision (\w+)>", attributes)
    return tuple(named) if len(named) == 2 else ("DEFAULT", "DEFAULT")


def _xla_algorithm(attributes: str) -> tuple[str, str]:
    """A dot_general's `algorithm = <...>` (a jax.lax.DotAlgorithmPreset, which overrides the
    precision): (its name for ResolveAccumulation, or "" where fp8dot has none; the attribute as
    printed, or "" without one). FP8 operands with an f32 accumulation are ANY_F8_ANY_F8_F32,
    with _FAST_ACCUM where the algorithm allows imprecise (fast) accumulation."""
    match = re.search(r"\balgorithm = <([^>]*)>", attributes)
    if not match:
        return "", ""
    fields = dict(re.findall(r"(\w+) = (\w+)", match.group(1)))
    if (fields.get("lhs_precision_type", "").startswith("f8") and
            fields.get("rhs_precision_type", "").startswith("f8") and
            fields.get("accumulation_type") == "f32"):
        fast = fields.get("allow_imprecise_accumulation") == "true"
        return "ANY_F8_ANY_F8_F32" + ("_FAST_ACCUM" if fast else ""), match.group(0)
    return "", match.group(0)


def gemms(fn, *args, **kwargs) -> list[Fp8Gemm]:
    """The FP8 GEMMs in jax.jit(fn)'s program for these arguments, in program order."""
    return gemms_in_program(jax.jit(fn).lower(*args, **kwargs).as_text())


def gemms_in_program(text: str) -> list[Fp8Gemm]:
    """The FP8 GEMMs of a lowered program's StableHLO text (gemms' reading of it)."""
    found = []
    for match in _CUSTOM_CALL.finditer(text):
        types = _types(match.group("types"))
        (lhs_type, lhs_dims), (rhs_type, rhs_dims) = types[:2]
        out_type, out_dims = _types(match.group("results"))[0]
        attributes = match.group("attributes")
        precision = (_attribute(attributes, "lhs_precision"),
                     _attribute(attributes, "rhs_precision"))
        algorithm = _attribute(attributes, "algorithm")
        accumulation = resolve_accumulation(lhs_type, rhs_type, precision, algorithm or None)
        scales = (f"{_attribute(attributes, 'lhs_scale_mode')} x "
                  f"{_attribute(attributes, 'rhs_scale_mode')}")
        found.append((match.start(), Fp8Gemm("fp8dot", f"{lhs_type}[{lhs_dims}]",
                                             f"{rhs_type}[{rhs_dims}]", f"{out_type}[{out_dims}]",
                                             precision, accumulation, scales, algorithm)))
    for match in _DOT_GENERAL.finditer(text):
        types = _types(match.group("types"))
        if len(types) < 2 or not all(t.startswith("float8") for t, _ in types[:2]):
            continue
        (lhs_type, lhs_dims), (rhs_type, rhs_dims) = types[:2]
        out_type, out_dims = _types(match.group("results"))[0]
        precision = _xla_precision(match.group("attributes"))
        algorithm, printed = _xla_algorithm(match.group("attributes"))
        accumulation = (f"not resolved: fp8dot has no name for {printed}" if printed and
                        not algorithm else
                        resolve_accumulation(lhs_type, rhs_type, precision, algorithm or None))
        found.append((match.start(), Fp8Gemm("xla", f"{lhs_type}[{lhs_dims}]",
                                             f"{rhs_type}[{rhs_dims}]", f"{out_type}[{out_dims}]",
                                             precision, accumulation, "", algorithm or printed)))
    return [gemm for _, gemm in sorted(found, key=lambda item: item[0])]


def explain(fn, *args, **kwargs) -> str:
    """A table of gemms(fn, *args): one line per FP8 GEMM with its resolved accumulation."""
    lines = [str(gemm) for gemm in gemms(fn, *args, **kwargs)]
    if not lines:
        return "no FP8 GEMM in the program"
    return "\n".join(f"{i}: {line}" for i, line in enumerate(lines))
