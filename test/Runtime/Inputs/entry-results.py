#!/usr/bin/env python3
# entry-results.py DIR - the kinds of the results of the loss stage's forward
# in DIR/manifest.json ("metric:NAME" for a metric), then every other
# forward's metric results (none expected: the loss's stage returns them).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "ftpipe-compile"))
import ftpipe_manifest  # noqa: E402

manifest = ftpipe_manifest.load(sys.argv[1])
loss = manifest["loss"]
entries = manifest["entry_points"]


def kinds(entry):
    return [r["kind"] + (":" + r["name"] if r["kind"] == "metric" else "")
            for r in entry["results"] if r["kind"] != "saved"]


for entry in entries:
    if entry["name"] == loss["entry"]:
        print("loss stage %d %s: %s" % (entry["stage"], entry["kind"],
                                        " ".join(kinds(entry))))
for entry in entries:
    if entry["name"] != loss["entry"] and any(
            k.startswith("metric") for k in kinds(entry)):
        print("stage %d %s: %s" % (entry["stage"], entry["kind"],
                                   " ".join(kinds(entry))))
