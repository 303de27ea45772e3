#!/usr/bin/env python3
"""The K loop of a GEMM kernel in a SASS listing, per K-block: what a static comparison of two
kernels needs when no GPU is at hand (bench/pending/*/README.md, docs/own-gemm.md).

Input: `cuobjdump -sass` of an object or cubin, and a substring of the kernel's mangled name.
The K loop is the innermost backward branch whose body holds wgmma (QGMMA/HGMMA); its K-blocks
are its stage waits (SYNCS...TRYWAIT on a full barrier; a loop unrolled by u holds u of them).
Output, per loop: instructions, wgmma and FP32 promotion instructions (FFMA/FADD) per K-block,
and where each stage wait sits: how many promotion instructions precede it since the last
wgmma wait (WARPGROUP.DEPBAR) and how many lie between it and the branch that reads its answer
(the answer's latency is hidden behind those). A wait at the loop's top, after the back-edge,
hides nothing.

    python3 bench/sass_loop.py LISTING NAME_SUBSTRING [--all-loops]
"""

import argparse
import re
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH_TARGET = re.compile(r"\bBRA(?:\.[A-Z.]+)?\s+(?:[!A-Z0-9_]+,\s*)?(0x[0-9a-f]+)")


def read_kernel(path, name):
    """[(address, instruction text)] of the one kernel in the listing whose name holds `name`."""
    with open(path, errors="replace") as f:
        text = f.read()
    kernels = re.split(r"\n\s+Function : ", text)[1:]
    matches = [k for k in kernels if name in k.split("\n", 1)[0]]
    if len(matches) != 1:
        names = [k.split("\n", 1)[0] for k in kernels]
        raise SystemExit(f"{path}: {len(matches)} kernels match '{name}' (of {len(names)})"
                         + "".join(f"\n  {n}" for n in (names if matches else names[:40])))
    instructions = []
    for line in matches[0].split("\n")[1:]:
        m = INSTRUCTION.search(line)
        if m:
            instructions.append((int(m.group(1), 16), m.group(2)))
    return matches[0].split("\n", 1)[0], instructions


def opcode(text):
    tokens = text.split()
    word = tokens[1] if tokens[0].startswith("@") and len(tokens) > 1 else tokens[0]
    return word.split(".")[0]


def loops(instructions):
    """Backward branches whose body holds wgmma, innermost first: (first, last) indices. The
    jumps back from a wait's out-of-line retry (ptxas puts a try-wait that failed at the
    function's end: try again, then jump back behind the first try) are no loops."""
    index_of = {address: i for i, (address, _) in enumerate(instructions)}
    found = []
    for i, (address, text) in enumerate(instructions):
        m = BRANCH_TARGET.search(text)
        if not m or opcode(text) != "BRA":
            continue
        target = int(m.group(1), 16)
        if target >= address or target not in index_of:
            continue
        if opcode(text) == "BRA" and not text.startswith("@") and any(
                is_stage_wait(t) for _, t in instructions[max(0, i - 6):i]):
            continue
        first = index_of[target]
        if any(opcode(t) in ("QGMMA", "HGMMA") for _, t in instructions[first:i + 1]):
            found.append((first, i))
    return sorted(set(found), key=lambda span: span[1] - span[0])


def is_stage_wait(text):
    return "SYNCS.PHASECHK" in text and "TRYWAIT" in text


def describe(instructions, first, last):
    body = instructions[first:last + 1]
    ops = [opcode(t) for _, t in body]
    waits = [i for i, (_, t) in enumerate(body) if is_stage_wait(t)]
    blocks = max(1, len(waits))
    promotion = sum(op in ("FFMA", "FADD") for op in ops)
    wgmma = sum(op in ("QGMMA", "HGMMA") for op in ops)
    lines = [f"loop {body[0][0]:#06x}-{body[-1][0]:#06x}: {len(body)} instructions, "
             f"{len(waits)} stage wait(s); per K-block {len(body) / blocks:.0f} instructions, "
             f"{wgmma / blocks:.0f} wgmma, {promotion / blocks:.0f} FFMA/FADD, "
             f"{(len(body) - wgmma - promotion) / blocks:.0f} other"]
    for w in waits:
        predicate = re.search(r"TRYWAIT\s+(!?U?P\d)", body[w][1])
        before = 0
        for _, t in reversed(body[:w]):
            if "DEPBAR" in t:
                break
            before += opcode(t) in ("FFMA", "FADD")
        after, read_at = 0, None
        for j in range(w + 1, len(body)):
            t = body[j][1]
            if predicate and opcode(t) == "BRA" and predicate.group(1).lstrip("!") in t.split()[0]:
                read_at = j
                break
            after += opcode(t) in ("FFMA", "FADD")
        place = ("at the loop's top" if all(opcode(t) not in ("FFMA", "FADD", "QGMMA", "HGMMA")
                                             for _, t in body[:w]) else
                 f"after {before} FFMA/FADD since the last wgmma wait")
        answer = (f"its answer read {read_at - w} instructions later, past {after} FFMA/FADD"
                  if read_at is not None else "its answer read outside the loop")
        lines.append(f"  stage wait at {body[w][0]:#06x}: {place}; {answer}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("listing", help="output of cuobjdump -sass")
    parser.add_argument("name", help="a substring of the kernel's mangled name")
    parser.add_argument("--all-loops", action="store_true",
                        help="every loop with wgmma, not only the innermost")
    args = parser.parse_args()
    kernel, instructions = read_kernel(args.listing, args.name)
    print(f"{kernel[:120]}{'...' if len(kernel) > 120 else ''}: {len(instructions)} instructions")
    spans = loops(instructions)
    if not spans:
        print("  no loop with wgmma")
        return 1
    for first, last in spans if args.all_loops else spans[:1]:
        print("\n".join(describe(instructions, first, last)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
