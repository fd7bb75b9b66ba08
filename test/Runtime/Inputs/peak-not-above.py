#!/usr/bin/env python3
"""Checks that one run's measured peak tensor memory is not above another
run's predicted peak.

Usage: peak-not-above.py LOG BASELINE_LOG DEVICES [SLACK]

Reads each device's "peak tensor X MiB" from ftpipe-run's memory lines
(stderr) of LOG and "predicted Y MiB" from those of BASELINE_LOG (the replay
of the baseline's lists: a bound that does not depend on timing, where the
baseline's measured peak does, with the messages held at that moment);
every one of DEVICES devices must report one in each, X at most Y times
1 + SLACK (default 0). Prints one line per device and "peak not above the
baseline on N devices"; exits 1 naming the device otherwise.
"""
import re
import sys

log, baseline, devices = sys.argv[1], sys.argv[2], int(sys.argv[3])
slack = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
measured = re.compile(r"^device (\d+) memory: peak tensor ([0-9.]+) MiB")
predicted = re.compile(
    r"^device (\d+) memory: peak tensor [0-9.]+ MiB \(predicted ([0-9.]+) MiB")


def peaks(path, pattern):
    found = {}
    for line in open(path):
        match = pattern.match(line)
        if match:
            found[int(match.group(1))] = float(match.group(2))
    return found


run, base = peaks(log, measured), peaks(baseline, predicted)
failed = False
for device in range(devices):
    if device not in run or device not in base:
        print(f"device {device}: no memory line in both logs")
        failed = True
        continue
    above = run[device] > base[device] * (1 + slack)
    print(f"device {device}: peak {run[device]} MiB, baseline's prediction "
          f"{base[device]} MiB"
          f"{' ABOVE' if above else ''}")
    failed = failed or above
if failed:
    sys.exit(1)
within = f" (slack {slack})" if slack else ""
print(f"peak not above the baseline{within} on {devices} devices")
