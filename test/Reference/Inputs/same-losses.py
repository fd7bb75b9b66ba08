#!/usr/bin/env python3
# same-losses.py LOG... - the "step K loss X" lines of training logs
# (ftpipe-run's progress lines, train_reference.py's) agree: the same steps
# in every log, and losses within 2e-6 (both print six decimals).
import re
import sys

runs = []
for path in sys.argv[1:]:
    losses = {}
    for line in open(path):
        match = re.match(r"step (\d+) loss ([-0-9.e]+)", line)
        if match:
            losses[int(match.group(1))] = float(match.group(2))
    runs.append(losses)
if not runs[0] or any(set(r) != set(runs[0]) for r in runs):
    sys.exit("error: the logs report different steps: %s" %
             [sorted(r) for r in runs])
for step in sorted(runs[0]):
    values = [r[step] for r in runs]
    if max(values) - min(values) > 2e-6:
        sys.exit("error: step %d: losses %s" % (step, values))
print("%d steps, %d runs: the same losses" % (len(runs[0]), len(runs)))
