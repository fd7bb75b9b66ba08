#!/usr/bin/env python3
"""Checks that one run's measured peak tensor memory is not above another's.

Usage: peak-not-above.py LOG BASELINE_LOG DEVICES

Reads each device's "peak tensor X MiB" from ftpipe-run's memory lines
(stderr) of both runs; every one of DEVICES devices must report one in each.
Prints one line per device and "peak not above the baseline on N devices";
exits 1 naming the device otherwise.
"""
import re
import sys

log, baseline, devices = sys.argv[1], sys.argv[2], int(sys.argv[3])
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
    above = run[device] > base[device]
    print(f"device {device}: peak {run[device]} MiB, baseline {base[device]} MiB"
          f"{' ABOVE' if above else ''}")
    failed = failed or above
if failed:
    sys.exit(1)
print(f"peak not above the baseline on {devices} devices")
