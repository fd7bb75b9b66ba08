#!/usr/bin/env python3
# compare-slowdown.py PLAIN SLOWED PROCESS - two profiles of the same
# artifacts (ftpipe-run --profile-out), the second run with process PROCESS
# slowed down (--debug-slow): per device the ratio of its stage times
# (forward + backward, summed over its stages) between the runs, and the
# slowed device's ratio relative to the others' (a loaded machine slows
# every device of a run alike, so the relative ratio is what the slowdown
# alone does). Prints them and whether that relative ratio is above 2.
import json
import sys

plain = json.load(open(sys.argv[1]))
slowed = json.load(open(sys.argv[2]))
process = int(sys.argv[3])
totals = {}
for a, b in zip(plain["stages"], slowed["stages"]):
    t = totals.setdefault(a["device"], [0.0, 0.0])
    t[0] += a["fwd_ms"] + a["bwd_ms"]
    t[1] += b["fwd_ms"] + b["bwd_ms"]
ratio = {d: (after / before if before > 0 else float("inf"))
         for d, (before, after) in totals.items()}
for device in sorted(ratio):
    print("device %d: %.2fx" % (device, ratio[device]))
others = [r for d, r in ratio.items() if d != process]
relative = ratio[process] / max(others)
print("slowdowns recorded: %s" % json.dumps(slowed["source"]["slowdowns"]))
print("device %d relative to the others: %.2fx" % (process, relative))
print("process %d is more than 2x slower than the others: %s"
      % (process, relative > 2))
