#!/usr/bin/env python3
# held-out-improved.py EVAL.csv - the held-out loss of ftpipe-run --eval-csv
# fell: its last evaluation is below its first (before training).
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
first, last = float(rows[0]["loss"]), float(rows[-1]["loss"])
if len(rows) < 2 or rows[0]["step"] != "0" or not last < first:
    sys.exit("error: held-out loss %.6f before training, %.6f after %s steps"
             % (first, last, rows[-1]["step"]))
print("held-out loss fell: %.4f before training, %.4f after %s steps (%d "
      "evaluations)" % (first, last, rows[-1]["step"], len(rows)))
