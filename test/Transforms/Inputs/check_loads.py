#!/usr/bin/env python3
"""Recomputes every device's load from an exported graph, independently of
lib/Partition, and compares it with the report's figures.

usage: check_loads.py GRAPH.json REPORT.json LINK_GBPS LATENCY_US

The model (docs/Report.md, FTPipe's CCO rule): a stage's compute C is the sum
of fwd + bwd (+ fwd again under recomputation) of its ops, and of the
replicated ops ("replicated": true) whose results it reads, directly or
through other replicated ops (their results never cross); every value that
crosses into another stage on another device costs bytes / bandwidth +
latency, once per destination stage, forward for all values and backward for
those that carry a gradient; a forwarded value ("forwarded": true) goes from
its producer to its first reading stage and from each reader to the next (in
dependency order), or from the latest earlier reader on the next one's
device; exposed = max(0, comm_fwd - C) + max(0, comm_bwd - C); a device's
load is the sum over its stages. Uniform links and devices only.
"""
import json
import sys


def main():
    graph = json.load(open(sys.argv[1]))
    report = json.load(open(sys.argv[2]))
    gbps, latency_us = float(sys.argv[3]), float(sys.argv[4])
    recompute = report["recompute"]
    stage_device = report["stage_device"]
    nodes = {n["id"]: n for n in graph["nodes"]}

    replicated = {n["id"] for n in graph["nodes"] if n.get("replicated")}
    readers = {}  # node -> nodes reading one of its results
    for v in graph["values"]:
        if v["src"] >= 0:
            readers.setdefault(v["src"], set()).update(v["dsts"])

    def stages_of(node):
        # The stages a node is computed in.
        if node not in replicated:
            return {nodes[node]["stage"]}
        return set().union(*[stages_of(r) for r in readers.get(node, ())])

    compute = [0.0] * len(stage_device)
    for n in graph["nodes"]:
        c = n["fwd_ms"] + n["bwd_ms"] + (n["fwd_ms"] if recompute else 0.0)
        for stage in stages_of(n["id"]):
            compute[stage] += c

    def transfer_ms(nbytes):
        return nbytes / (gbps * 1e6) + latency_us * 1e-3

    # A topological order of the stages, from the values that cross them.
    succs = {s: set() for s in range(len(stage_device))}
    for v in graph["values"]:
        if v["src"] >= 0 and v["src"] not in replicated:
            src_stage = nodes[v["src"]]["stage"]
            for d in v["dsts"]:
                succs[src_stage] |= stages_of(d) - {src_stage}
    indegree = {s: 0 for s in succs}
    for s in succs:
        for t in succs[s]:
            indegree[t] += 1
    ready = sorted(s for s in succs if indegree[s] == 0)
    position = {}
    while ready:
        s = ready.pop(0)
        position[s] = len(position)
        for t in sorted(succs[s]):
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)

    def hops(src_stage, readers, forwarded):
        # (from, to) stage pairs the value travels along.
        if not forwarded:
            return [(src_stage, r) for r in readers]
        readers = sorted(readers, key=position.get)
        pairs = [(src_stage, readers[0])]
        for i in range(1, len(readers)):
            same = [j for j in range(i) if stage_device[readers[j]] == stage_device[readers[i]]]
            pairs.append((readers[same[-1] if same else i - 1], readers[i]))
        return pairs

    comm_fwd = [0.0] * len(stage_device)
    comm_bwd = [0.0] * len(stage_device)
    for v in graph["values"]:
        if v["src"] < 0 or v["src"] in replicated:
            continue
        src_stage = nodes[v["src"]]["stage"]
        destinations = set().union(*[stages_of(d) for d in v["dsts"]]) - {src_stage}
        if not destinations:
            continue
        forwarded = nodes[v["src"]].get("forwarded", False)
        for src_stage, dst_stage in hops(src_stage, destinations, forwarded):
            if stage_device[dst_stage] == stage_device[src_stage]:
                continue
            t = transfer_ms(v["bytes"])
            comm_fwd[src_stage] += t
            comm_fwd[dst_stage] += t
            if v["grad"]:
                comm_bwd[src_stage] += t
                comm_bwd[dst_stage] += t

    loads = [0.0] * report["devices"]
    for s, device in enumerate(stage_device):
        exposed = max(0.0, comm_fwd[s] - compute[s]) + max(0.0, comm_bwd[s] - compute[s])
        loads[device] += compute[s] + exposed

    worst = 0.0
    for d, entry in enumerate(report["per_device"]):
        reported = entry["load_ms"]
        error = abs(reported - loads[d]) / max(1e-12, abs(loads[d]), abs(reported))
        worst = max(worst, error)
        if error > 1e-9:
            print(f"device {d}: report says {reported} ms, recomputed {loads[d]} ms")
            return 1
    forwarded = sum(1 for n in graph["nodes"] if n.get("forwarded"))
    print(f"{len(loads)} device loads agree (largest relative difference "
          f"{worst:.1e}), {forwarded} forwarded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
