#!/usr/bin/env python3
"""Checks that one run's measured peak tensor memory is not above another's.

Usage: peak-not-above.py LOG BASELINE_LOG DEVICES [SLACK]

Reads each device's "peak tensor X MiB" from ftpipe-run's memory lines
(stderr) of both runs; every one of DEVICES devices must report one in each,
at most the baseline's times 1 + SLACK (default 0: the received messages a
device holds at its peak depend on when they arrive). Prints one line per
device and "peak not above the baseline on N devices"; exits 1 naming the
device otherwise.
"""
import re
import sys

log, baseline, devices = sys.argv[1], sys.argv[2], int(sys.argv[3])
slack = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
pattern = re.compile(r"^device (\d+) memory: peak tensor ([0-9.]+) MiB")


def peaks(path):
    found = {}
    for line in open(path):
        match = pattern.match(line)
        if match:
            found[int(match.group(1))] = float(match.group(2))
    return found


run, base = peaks(log), peaks(baseline)
failed = False
for device in range(devices):
    if device not in run or device not in base:
        print(f"device {device}: no memory line in both logs")
        failed = True
        continue
    above = run[device] > base[device] * (1 + slack)
    print(f"device {device}: peak {run[device]} MiB, baseline {base[device]} MiB"
          f"{' ABOVE' if above else ''}")
    failed = failed or above
if failed:
    sys.exit(1)
within = f" (slack {slack})" if slack else ""
print(f"peak not above the baseline{within} on {devices} devices")
