#!/usr/bin/env python3
"""CPU samples of an ftpipe-run (or any) process by kind of work (issue 25).

Usage:
  perf record -F 499 -g -o P.perf -- ftpipe-run ...
  perf script -i P.perf -F time,ip,sym,dso | cpu_profile_by_kind.py [--from SYM]
  perf script -i P.perf -F pid,time,ip,sym,dso | cpu_profile_by_kind.py --pid PID

Groups the samples taken from the first one whose stack holds SYM (default
`stage`: the first call of generated code, so start-up is left out) by the
kind of work on top of the stack: OpenBLAS's gemm kernels and its packing,
the kernel (page faults of fresh buffers, munmap), the generated code's own
loops, copies (memrefCopy, memcpy/memmove), memset outside the kernel, the
optimizer, the rest of the runtime and everything else; prints each kind's
share of the samples. The kernel's samples are split by the user-space
function that entered it. With --pid (and `-F pid,...`), only that process's
samples (one MPI process of `ftpipe-run --np N`). With --until SYM, the
samples after the last one whose stack holds SYM are left out too (a
benchmark that runs PyTorch after the compiled code: --until stage). With
--hz F (perf's -F) and --per N, each kind's CPU milliseconds per N (e.g.
micro-batches run) are printed beside its share. Not a test.
"""
import argparse
import collections
import re
import sys


def kind(frame, dso):
    if "openblas" in dso:
        return "BLAS packing" if "copy" in frame else "BLAS gemm kernels"
    if "kallsyms" in dso:
        return "kernel"
    if dso.endswith(".so") and "device" in dso.rsplit("/", 1)[-1]:
        return "generated loops"
    if "memrefCopy" in frame or "memcpy" in frame or "memmove" in frame:
        return "copies"
    if "memset" in frame:
        return "memset"
    if "Optimizer" in frame:
        return "optimizer"
    if "ftpipe-run" in dso:
        return "runtime (other)"
    return "other"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--from", dest="start", default="stage")
    parser.add_argument("--pid", type=int)
    parser.add_argument("--until")
    parser.add_argument("--hz", type=float)
    parser.add_argument("--per", type=float, default=1.0)
    opts = parser.parse_args()
    line = re.compile(r"^\s*[0-9a-f]+ (.*) \((.*)\)$")
    kinds, entered = collections.Counter(), collections.Counter()
    started, total = False, 0
    samples = sys.stdin.read().split("\n\n")
    if opts.until:
        last = max((i for i, s in enumerate(samples) if opts.until in s),
                   default=len(samples) - 1)
        samples = samples[:last + 1]
    for sample in samples:
        lines = sample.strip().split("\n")
        if opts.pid is not None and lines[0].split()[:1] != [str(opts.pid)]:
            continue
        frames = [line.match(l) for l in lines[1:]]
        frames = [(m.group(1), m.group(2)) for m in frames if m]
        if not frames:
            continue
        if not started:
            started = any(opts.start in f for f, _ in frames)
            if not started:
                continue
        total += 1
        top = kind(*frames[0])
        kinds[top] += 1
        if top == "kernel":
            user = next((f for f, d in frames if "kallsyms" not in d), "?")
            entered[re.sub(r"\+0x[0-9a-f]+$", "", user)[:60]] += 1
    print(f"{total} samples")

    def ms(count):
        if not opts.hz:
            return ""
        return f"  {1e3 * count / opts.hz / opts.per:8.1f} ms"
    for name, count in kinds.most_common():
        print(f"  {100 * count / total:5.1f} %{ms(count)}  {name}")
    print("the kernel, entered from:")
    for name, count in entered.most_common(6):
        print(f"  {100 * count / total:5.1f} %{ms(count)}  {name}")


if __name__ == "__main__":
    main()
