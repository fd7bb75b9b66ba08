#!/usr/bin/env python3
"""resident_by_mapping.py ARTIFACTS - where ftpipe-run's resident memory is.

Start it, then `ftpipe-run ARTIFACTS --np N ...` (ARTIFACTS spelled the same,
as the first argument). It polls /proc/PID/smaps of every rank (the
processes whose first argument is ARTIFACTS, without --np) and, once they
end, prints per rank the mappings at its largest resident total: the
anonymous ones of more than 256 KiB by size and resident bytes (each block
of 1 MiB or more is a mapping of its own: tensors, generated code's buffers,
OpenBLAS's 128 MiB work buffer), and the files. Not a test; issue 25 used it
to find OpenBLAS's buffer in ftpipe-run's resident memory
(docs/Benchmarks.md). Polling costs CPU: the run is slower under it.
"""
import collections
import os
import sys
import time

artifacts = sys.argv[1].encode()


def ranks():
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if (len(args) > 1 and args[0].endswith(b"ftpipe-run") and
                args[1] == artifacts and b"--np" not in args):
            found.append(int(pid))
    return found


def mappings(pid):
    """[name, size, resident] per mapping, or None once the process is gone."""
    result, current = [], None
    try:
        for line in open(f"/proc/{pid}/smaps"):
            fields = line.split()
            if not fields[0].endswith(":"):
                low, high = (int(x, 16) for x in fields[0].split("-"))
                name = fields[5] if len(fields) > 5 else "[anon]"
                current = [name, high - low, 0]
                result.append(current)
            elif fields[0] == "Rss:":
                current[2] = int(fields[1]) * 1024
    except OSError:
        return None
    return result


peaks, started = {}, False
while True:
    pids = ranks()
    started = started or bool(pids)
    if started and not pids:
        break
    for pid in pids:
        maps = mappings(pid)
        if maps and sum(m[2] for m in maps) > sum(m[2] for m in peaks.get(pid, [])):
            peaks[pid] = maps
    time.sleep(0.05)

mib = 1 << 20
for pid, maps in sorted(peaks.items()):
    print(f"pid {pid}: resident {sum(m[2] for m in maps) / mib:.1f} MiB at its peak")
    anonymous = collections.Counter()
    files = collections.Counter()
    for name, size, resident in maps:
        if name == "[anon]" and resident > 256 * 1024:
            anonymous[(size, resident)] += 1
        elif name != "[anon]":
            files[name] += resident
    for (size, resident), count in sorted(anonymous.items(),
                                          key=lambda kv: -kv[0][1] * kv[1]):
        print(f"  {count} x anonymous {size / mib:.1f} MiB, resident "
              f"{resident / mib:.1f} MiB")
    for name, resident in files.most_common(8):
        print(f"  {name}: {resident / mib:.1f} MiB")
