"""Compares two ftpipe-report JSON files' simulated step of one schedule.

compare_steps.py OLD.json NEW.json SCHEDULE prints whether NEW's step under
SCHEDULE (ms per mini-batch) is above OLD's, for a lit test of a plan's
property (ftpipe-auto-partition-sync-schedule.mlir).
"""
import json
import sys

old_path, new_path, kind = sys.argv[1:]


def step(path):
    rows = {r["schedule"]: r for r in json.load(open(path))["schedules"]}
    return rows[kind]["ms_per_minibatch"]


old, new = step(old_path), step(new_path)
verdict = "not above" if new <= old * (1 + 1e-9) else "ABOVE"
print("%s step %s the old plan's" % (kind, verdict))
