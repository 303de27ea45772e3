"""Summarises a py-spy raw profile (one "frame;frame;...;leaf count" line per stack): the
frames that hold the most samples inclusively (anywhere on the stack) and by themselves (the
leaf), each as a share of the samples counted. --within keeps only the stacks that pass through
a frame whose name contains the text (e.g. the timed loop's function), leaving out the start-up
imports and the interpreter's exit.

    python bench/python/profile_summary.py PROFILE.txt [--top N] [--within TEXT]
"""

import argparse
import collections
import re


def frame_name(frame: str) -> str:
    # py-spy writes "function (file:line)"; the line differs per sample, the function does not.
    return re.sub(r":\d+\)$", ")", frame.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--within", default="", help="count only stacks through this frame")
    options = parser.parse_args()
    inclusive, leaf = collections.Counter(), collections.Counter()
    total = 0
    with open(options.profile) as lines:
        for line in lines:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                continue
            samples = int(count)
            frames = [frame_name(frame) for frame in stack.split(";")]
            if options.within and not any(options.within in frame for frame in frames):
                continue
            total += samples
            leaf[frames[-1]] += samples
            for frame in set(frames):
                inclusive[frame] += samples
    print(f"{total} samples")
    for title, counter in (("inclusive", inclusive), ("self", leaf)):
        print(f"\n{title}:")
        for frame, samples in counter.most_common(options.top):
            print(f"{100.0 * samples / max(total, 1):6.1f}%  {frame[:150]}")


if __name__ == "__main__":
    main()
