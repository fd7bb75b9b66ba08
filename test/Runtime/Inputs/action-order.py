"""Prints each device's actions in the order a run's trace (--trace) shows
them, from step FROM on: "device D: 1F8 1B8 ... U2" (the --print-schedule
spelling). Devices are the trace's threads; a device runs its actions one
at a time, so their start times order them.

Usage: action-order.py TRACE.json MICRO_BATCHES FROM_STEP
"""
import json
import re
import sys

trace = json.load(open(sys.argv[1]))
micro_batches, first = int(sys.argv[2]), int(sys.argv[3])
events = trace["traceEvents"] if isinstance(trace, dict) else trace
devices = {}
for event in events:
    if event.get("ph") != "X":
        continue
    task = re.fullmatch(r"([FBIW]) s(\d+) mb(\d+)", event["name"])
    update = re.fullmatch(r"U(\d+)", event["name"])
    if task and int(task[3]) >= first * micro_batches:
        name = task[2] + task[1] + task[3]
    elif update and int(update[1]) >= first:
        name = event["name"]
    else:
        continue
    devices.setdefault(event["tid"], []).append((event["ts"], name))
for device in sorted(devices):
    names = [name for _, name in sorted(devices[device])]
    print("device %d: %s" % (device, " ".join(names)))
