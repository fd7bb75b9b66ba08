#!/usr/bin/env python3
"""Writes a changed copy of an artifact directory of ftpipe-compile, for
tests of refusals.

edit-artifacts.py IN OUT [STATEMENT ...] [--replace-bytes OLD NEW]

Copies IN's manifest.json and device libraries to OUT, runs each STATEMENT
(Python) on the manifest `m`, with `entry(NAME)` the entry point NAME and
`param(NAME)` the parameter NAME, and replaces the bytes OLD by NEW (of the
same length) in every library. Standard library only.
"""

import argparse
import json
import os
import shutil

parser = argparse.ArgumentParser()
parser.add_argument("source")
parser.add_argument("destination")
parser.add_argument("statements", nargs="*")
parser.add_argument("--replace-bytes", nargs=2, metavar=("OLD", "NEW"))
args = parser.parse_args()

os.makedirs(args.destination, exist_ok=True)
with open(os.path.join(args.source, "manifest.json")) as f:
    m = json.load(f)


def entry(name):
    return next(e for e in m["entry_points"] if e["name"] == name)


def param(name):
    return m["parameters"][name]


for statement in args.statements:
    exec(statement)
with open(os.path.join(args.destination, "manifest.json"), "w") as f:
    json.dump(m, f)

for device in m["devices"]:
    source = os.path.join(args.source, device["artifact"])
    target = os.path.join(args.destination, device["artifact"])
    shutil.copyfile(source, target)
    if args.replace_bytes:
        old, new = (s.encode() for s in args.replace_bytes)
        assert len(old) == len(new)
        with open(target, "rb") as f:
            data = f.read()
        assert old in data, "no %r in %s" % (old, source)
        with open(target, "wb") as f:
            f.write(data.replace(old, new))
