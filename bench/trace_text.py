#!/usr/bin/env python3
"""trace_text.py TRACE [WIDTH] - a Chrome trace's device tracks as text.

One line per track of every process in the trace (ftpipe-run --trace; with
--compare-simulator, process 0 is the measured run and process 1 the
simulator on the same lists): each action's span is filled with its letter
(F forward, B backward, I and W a split backward's parts, U update), idle
time is '.', each process scaled to its own span over WIDTH columns
(default 100), so measured and simulated timelines line up by shape.
"""
import json
import sys


def main():
    trace = json.load(open(sys.argv[1]))["traceEvents"]
    width = int(sys.argv[2]) if len(sys.argv) > 2 else 100
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
        print("%s (%.1f ms)" % (processes.get(pid, "process %d" % pid),
                                (end - start) / 1e3))
        for tid in sorted({e["tid"] for e in events}):
            row = ["."] * width
            for e in events:
                if e["tid"] != tid:
                    continue
                letter = e["name"][0] if e["name"][0] in "FBIWU" else "?"
                first = int((e["ts"] - start) * scale)
                last = max(first + 1, int((e["ts"] + e["dur"] - start) * scale))
                for c in range(first, min(last, width)):
                    row[c] = letter
            print("  %-22s |%s|" % (tracks.get((pid, tid), "track %d" % tid),
                                    "".join(row)))


main()
