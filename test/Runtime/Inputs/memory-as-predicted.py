#!/usr/bin/env python3
"""Checks ftpipe-run's memory lines (stderr) against its prediction.

Usage: memory-as-predicted.py LOG DEVICES LOW HIGH

Every device's "measured / predicted" ratio of peak tensor memory must lie in
[LOW, HIGH] and every one of DEVICES devices must report one. Prints one line
per device and "memory as predicted on N devices"; exits 1 naming the device
otherwise.
"""
import re
import sys

log, devices, low, high = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
pattern = re.compile(r"^device (\d+) memory: peak tensor ([0-9.]+) MiB "
                     r"\(predicted ([0-9.]+) MiB, measured / predicted ([0-9.]+)\)")
seen = {}
for line in open(log):
    match = pattern.match(line)
    if match:
        seen[int(match.group(1))] = (float(match.group(2)), float(match.group(3)),
                                     float(match.group(4)))
failed = False
for device in range(devices):
    if device not in seen:
        print(f"device {device}: no memory line with a prediction")
        failed = True
        continue
    measured, predicted, ratio = seen[device]
    inside = low <= ratio <= high
    print(f"device {device}: measured {measured} MiB, predicted {predicted} MiB,"
          f" ratio {ratio} {'inside' if inside else 'OUTSIDE'} [{low}, {high}]")
    failed = failed or not inside
if failed:
    sys.exit(1)
print(f"memory as predicted on {devices} devices")
