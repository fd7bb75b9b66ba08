#!/usr/bin/env python3
# compare-slowdown.py PLAIN SLOWED PROCESS - per device, the ratio of the
# stage times (forward + backward, summed over the device's stages) of two
# profiles of the same artifacts (ftpipe-run --profile-out), the second run
# with process PROCESS slowed down (--debug-slow); prints the ratios and
# whether the slowed device's ratio is more than 2x every other device's.
# The two runs may see different machine loads (wall times), so the slowed
# device is compared with the others of the same two runs, not with 1.
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
ratios = {}
for device, (before, after) in sorted(totals.items()):
    ratios[device] = after / before if before > 0 else float("inf")
    print("device %d: %.2fx" % (device, ratios[device]))
others = [r for d, r in ratios.items() if d != process]
ok = process in ratios and bool(others) and ratios[process] > 2 * max(others)
print("slowdowns recorded: %s" % json.dumps(slowed["source"]["slowdowns"]))
print("process %d alone is more than 2x slower: %s" % (process, ok))
