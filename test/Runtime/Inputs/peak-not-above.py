#!/usr/bin/env python3
"""Checks that one run's predicted peak memory is not above another run's.

Usage: peak-not-above.py LOG BASELINE_LOG DEVICES [SLACK]

Reads each device's memory line from ftpipe-run's stderr of both runs and
compares the prediction ftpipe-run makes from the device's action list and
the compiled code's peaks ("predicted X MiB"), a figure that does not depend
on timing: every one of DEVICES devices must report one in each log, at most
the baseline's times 1 + SLACK (default 0). The measured peaks are not
compared with each other: the received messages a device holds at its peak
depend on when they arrive, so two runs' measured peaks differ by several
percent (memory-as-predicted.py ties each run's measured peak to its own
prediction and plan instead). Prints one line per device and "predicted peak
not above the baseline on N devices"; exits 1 naming the device otherwise.
"""
import re
import sys

log, baseline, devices = sys.argv[1], sys.argv[2], int(sys.argv[3])
slack = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
pattern = re.compile(r"^device (\d+) memory: peak tensor [0-9.]+ MiB "
                     r"\(predicted ([0-9.]+) MiB")


def predictions(path):
    found = {}
    for line in open(path):
        match = pattern.match(line)
        if match:
            found[int(match.group(1))] = float(match.group(2))
    return found


run, base = predictions(log), predictions(baseline)
failed = False
for device in range(devices):
    if device not in run or device not in base:
        print(f"device {device}: no memory line with a prediction in both logs")
        failed = True
        continue
    above = run[device] > base[device] * (1 + slack)
    print(f"device {device}: predicted {run[device]} MiB, baseline {base[device]} MiB"
          f"{' ABOVE' if above else ''}")
    failed = failed or above
if failed:
    sys.exit(1)
within = f" (slack {slack})" if slack else ""
print(f"predicted peak not above the baseline{within} on {devices} devices")
