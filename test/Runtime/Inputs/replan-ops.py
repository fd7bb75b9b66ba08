#!/usr/bin/env python3
# replan-ops.py LOG DEVICE - from ftpipe-run --replan's decision line
# ("ops per device 150/132 -> 56/226"), the ops on DEVICE before and after
# the re-plan, and whether the new plan gave it fewer.
import re
import sys

match = re.search(r"ops per device ([0-9/]+) -> ([0-9/]+)",
                  open(sys.argv[1]).read())
if not match:
    sys.exit("no decision line with ops per device")
device = int(sys.argv[2])
before = [int(n) for n in match.group(1).split("/")]
after = [int(n) for n in match.group(2).split("/")]
print("device %d: %d -> %d ops (%s)" %
      (device, before[device], after[device],
       "fewer" if after[device] < before[device] else "not fewer"))
