#!/usr/bin/env python3
# cuda_host_work.py - what the host code of a CUDA artifact does per call of
# each function: kernel launches and synchronisations, each counted as many
# times as the host loops around it run (constant trip counts; a loop whose
# bounds are not constants counts once). Reads the IR that
# `ftpipe-opt --ftpipe-lower-cuda --mlir-print-ir-after=ftpipe-device-copies`
# prints (bench/cuda_host_work.sh makes it). Counted, not timed: a launch
# costs a few microseconds of host time, a synchronisation drains the stream.
#
#   cuda_host_work.py HOST.mlir

import re
import sys


def host_text(text):
    """The text without the gpu.module of kernels (device code)."""
    start = text.find("gpu.module @")
    if start < 0:
        return text
    depth, end = 0, text.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[:start] + text[end + 1:]
        end += 1


def main():
    text = host_text(open(sys.argv[1]).read())
    constants = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"(%c\w*) = arith\.constant (\d+) : index", text)}
    loop = re.compile(r"(?:%\S+ = )?scf\.for %\w+ = (%\w+) to (%\w+) step (%\w+)")
    counts, function, stack = {}, None, []
    for line in text.split("\n"):
        code = re.sub(r"loc\(.*", "", re.sub(r'"[^"]*"', "", line)).strip()
        if code.startswith("func.func"):
            function = code.split("@")[1].split("(")[0]
        times = 1
        for trips in stack:
            times *= trips
        row = counts.setdefault(function, [0, 0])
        if code.startswith("gpu.launch_func"):
            row[0] += times
        if re.match(r"(func\.)?call @ftpipe_cuda_synchronize", code):
            row[1] += times
        for _ in range(code.count("}")):
            if stack:
                stack.pop()
        opens = code.count("{")
        match = loop.match(code)
        for i in range(opens):
            trips = 1
            if match and i == opens - 1:
                low, high, step = (constants.get(v) for v in match.groups())
                if None not in (low, high, step):
                    trips = (high - low) // step
            stack.append(trips)
    print("%-50s %10s %16s" % ("function", "launches", "synchronisations"))
    for function, (launches, syncs) in counts.items():
        if function and (launches or syncs):
            print("%-50s %10d %16d" % (function, launches, syncs))


if __name__ == "__main__":
    main()
