#!/usr/bin/env python3
# final-loss-below.py LOG THRESHOLD - the loss of the last "step K loss X"
# line of a training log is below THRESHOLD.
import re
import sys

losses = [float(m.group(1)) for m in
          (re.match(r"step \d+ loss ([-0-9.e]+)", line)
           for line in open(sys.argv[1])) if m]
if not losses:
    sys.exit("error: no step lines in %s" % sys.argv[1])
first, last, threshold = losses[0], losses[-1], float(sys.argv[2])
verdict = "below" if last < threshold else "NOT below"
print("loss %.4f -> %.4f after %d steps: %s %g" % (first, last, len(losses),
                                                    verdict, threshold))
sys.exit(0 if last < threshold else 1)
