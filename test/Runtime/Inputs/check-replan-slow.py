#!/usr/bin/env python3
# check-replan-slow.py REPORT PROFILE - the work a plan (ftpipe-report's
# JSON) gives each device, made from a PROFILE whose run slowed processes
# down (source.slowdowns): a device's compute in the report is its work at
# its (slowed) speed, so its work is that divided by its slowdown. Prints
# each device's work and whether every slowed device got less than half of
# the fastest device's.
import json
import sys

report = json.load(open(sys.argv[1]))
profile = json.load(open(sys.argv[2]))
slow = {}
for process, factor in profile["source"]["slowdowns"].items():
    for p in profile["processes"]:
        if p["process"] == int(process):
            slow[p["device"]] = factor
work = {d["device"]: d["compute_ms"] / slow.get(d["device"], 1.0)
        for d in report["per_device"]}
for device in sorted(work):
    print("device %d: work %.3f ms per micro-batch at full speed, slowed %gx"
          % (device, work[device], slow.get(device, 1.0)))
fastest = max(w for d, w in work.items() if d not in slow)
print("work moved off the slowed devices: %s"
      % all(work[d] < fastest / 2 for d in slow))
