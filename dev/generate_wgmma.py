#!/usr/bin/env python3
"""Writes src/cuda/kernels/wgmma_fp8.cuh: the wgmma.mma_async wrappers for FP8 operands.

PTX names every accumulator register of a wgmma, so each width N needs its own operand list;
this script spells them out once per N (one macro per N, instantiated for both lhs types).
Run it from the repository root after changing the widths; the output is committed.
"""
import pathlib

WIDTHS = (16, 32, 64, 128, 192)
OUT = pathlib.Path("src/cuda/kernels/wgmma_fp8.cuh")

HEADER = """\
// wgmma.mma_async for FP8 operands, both read from shared memory through matrix descriptors
// (K-major, which FP8 wgmma requires), f32 accumulators in registers: D[64 x N] (+)= A . B over
// one k32 step. One specialisation per (N, lhs type). Written by dev/generate_wgmma.py (PTX names
// every accumulator register, so each N spells out its operand list); do not edit by hand.
#pragma once

#include <cstdint>

namespace fp8dot::cuda::hopper {

// The lhs (A) type; the rhs (B) is e4m3 (the weights and activations of the seed's recipe: e5m2
// appears only as the gradient, which is the lhs of both gradient GEMMs).
enum class WgmmaLhs { kE4m3, kE5m2 };

template <int kN, WgmmaLhs kLhs>
struct WgmmaFp8;
"""


def macro(n):
    regs = n // 2
    lines = [f"#define FP8DOT_WGMMA_FP8_N{n}(kLhsType, lhs_ptx)"]
    body = [
        "  template <>",
        f"  struct WgmmaFp8<{n}, kLhsType> {{",
        f"    static constexpr int kRegisters = {regs};",
        "    /* accumulate == false: D = A . B (the registers' old values are ignored). */",
        f"    __device__ static void Run(float (&d)[{regs}], uint64_t a, uint64_t b, bool accumulate) {{",
        "      asm volatile(",
        f'          "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{regs + 2}, 0;\\n"',
        f'          "wgmma.mma_async.sync.aligned.m64n{n}k32.f32." lhs_ptx ".e4m3 "',
    ]
    for start in range(0, regs, 16):
        chunk = ", ".join(f"%{i}" for i in range(start, min(start + 16, regs)))
        opening = "{" if start == 0 else " "
        closing = "}," if start + 16 >= regs else ","
        body.append(f'          "{opening}{chunk}{closing}"')
    body.append(f'          " %{regs}, %{regs + 1}, p, 1, 1;\\n}}\\n"')
    outputs = [f'"+f"(d[{i}])' for i in range(regs)]
    rows = [", ".join(outputs[i:i + 8]) for i in range(0, regs, 8)]
    body.append("          : " + (",\n            ".join(rows)))
    body.append('          : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)));')
    body.append("    }")
    body.append("  };")
    return "\n".join(lines + body).replace("\n", " \\\n") + "\n"


parts = [HEADER]
for n in WIDTHS:
    parts.append(macro(n))
for n in WIDTHS:
    parts.append(f'FP8DOT_WGMMA_FP8_N{n}(WgmmaLhs::kE4m3, "e4m3")\n'
                 f'FP8DOT_WGMMA_FP8_N{n}(WgmmaLhs::kE5m2, "e5m2")')
parts.append("\n".join(f"#undef FP8DOT_WGMMA_FP8_N{n}" for n in WIDTHS))
parts.append("}  // namespace fp8dot::cuda::hopper\n")
OUT.write_text("\n".join(parts))
