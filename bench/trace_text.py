#!/usr/bin/env python3
"""trace_text.py [--width N] TRACE... - Chrome traces' device tracks as text.

One line per track of every trace given (ftpipe-run --trace FILE; with
--compare-simulator also FILE.simulated.json, the simulator on the same
lists): each action's span is filled with its letter (F forward, B
backward, I and W a split backward's parts, U update, R a replicated
device's all-reduce of one stage's gradients), idle time is '.',
each trace scaled to its own span over N columns (default 100), so measured
and simulated timelines line up by shape.
"""
import json
import sys


def main():
    args = sys.argv[1:]
    width = 100
    if args[:1] == ["--width"]:
        width, args = int(args[1]), args[2:]
    for path in args:
        show(path, width)


def show(path, width):
    trace = json.load(open(path))["traceEvents"]
    processes, tracks = {}, {}
    for e in trace:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            tracks[(e["pid"], e["tid"])] = e["args"]["name"]
    spans = {}
    for e in trace:
        if e.get("ph") != "X" or e.get("cat") in ("activation", "gradient"):
            continue
        spans.setdefault(e["pid"], []).append(e)
    for pid in sorted(spans):
        events = spans[pid]
        start = min(e["ts"] for e in events)
        end = max(e["ts"] + e["dur"] for e in events)
        scale = width / max(end - start, 1e-9)
        print("%s (%.1f ms)" % (processes.get(pid, path), (end - start) / 1e3))
        for tid in sorted({e["tid"] for e in events}):
            row = ["."] * width
            for e in events:
                if e["tid"] != tid:
                    continue
                letter = ("R" if e["name"].startswith("AR ") else
                          e["name"][0] if e["name"][0] in "FBIWU" else "?")
                first = int((e["ts"] - start) * scale)
                last = max(first + 1, int((e["ts"] + e["dur"] - start) * scale))
                for c in range(first, min(last, width)):
                    row[c] = letter
            print("  %-30s |%s|" % (tracks.get((pid, tid), "track %d" % tid),
                                    "".join(row)))


main()
