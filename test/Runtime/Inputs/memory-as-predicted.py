#!/usr/bin/env python3
"""Checks ftpipe-run's memory lines (stderr) against its prediction and the plan.

Usage: memory-as-predicted.py LOG DEVICES LOW HIGH [PLAN_LOW]

Every device's "measured / predicted" ratio of peak tensor memory must lie in
[LOW, HIGH] and every one of DEVICES devices must report one. With PLAN_LOW,
every device's "measured / plan" ratio (the plan's figure in the manifest,
a bound) must lie in [PLAN_LOW, 1]. Prints one line per device and "memory as
predicted on N devices" (with "and within the plan" under PLAN_LOW); exits 1
naming the device otherwise.
"""
import re
import sys

log, devices, low, high = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
plan_low = float(sys.argv[5]) if len(sys.argv) > 5 else None
pattern = re.compile(r"^device (\d+) memory: peak tensor ([0-9.]+) MiB "
                     r"\(predicted ([0-9.]+) MiB, measured / predicted ([0-9.]+)\)")
plan_pattern = re.compile(r"; plan ([0-9.]+) MiB, measured / plan ([0-9.]+)")
seen = {}
for line in open(log):
    match = pattern.match(line)
    if match:
        plan = plan_pattern.search(line)
        seen[int(match.group(1))] = (float(match.group(2)), float(match.group(3)),
                                     float(match.group(4)),
                                     (float(plan.group(1)), float(plan.group(2))) if plan else None)
failed = False
for device in range(devices):
    if device not in seen:
        print(f"device {device}: no memory line with a prediction")
        failed = True
        continue
    measured, predicted, ratio, plan = seen[device]
    inside = low <= ratio <= high
    print(f"device {device}: measured {measured} MiB, predicted {predicted} MiB,"
          f" ratio {ratio} {'inside' if inside else 'OUTSIDE'} [{low}, {high}]")
    failed = failed or not inside
    if plan_low is None:
        continue
    if plan is None:
        print(f"device {device}: no plan figure")
        failed = True
        continue
    within = plan_low <= plan[1] <= 1.0
    print(f"device {device}: plan {plan[0]} MiB, measured / plan {plan[1]}"
          f" {'inside' if within else 'OUTSIDE'} [{plan_low}, 1]")
    failed = failed or not within
if failed:
    sys.exit(1)
print(f"memory as predicted on {devices} devices"
      + (" and within the plan" if plan_low is not None else ""))
