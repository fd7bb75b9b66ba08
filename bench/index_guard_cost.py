#!/usr/bin/env python3
# index_guard_cost.py - the cost of the index guards (ftpipe-clamp-gather-
# indices and the trap of computed indices, docs/Robustness.md) on one
# BERT-large encoder layer.
#
#   index_guard_cost.py GUARDED_DIR BARE_DIR MODEL.mlir CONFIG.json
#                       [--repeats N]
#
# GUARDED_DIR and BARE_DIR hold ftpipe-compile's artifacts of MODEL.mlir for
# one device, compiled as usual and with --index-guards=false
# (bench/compiled_bert_layer.sh DIR guards makes them). Both are loaded into
# this process and run forward + backward of the same micro-batch (the same
# random weights and inputs) alternately, N pairs, the order swapped every
# pair (AB, BA, ...), so that both meet the same load. Prints, measured in
# this run, the process's CPU time of each call (one BLAS thread) and wall
# time: medians per variant, the ratio of the medians and the median and
# range of the per-pair ratios, the load average before and after, and both
# losses (equal: the guards change nothing for valid ids).

import argparse
import os
import statistics
import sys
from types import SimpleNamespace

# (which also puts tools/ftpipe-compile and tools/ftpipe-reference on the
# path)
from compiled_bert_layer import compiled_step, reference_data, timed  # noqa: E402


def load_average():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description="cost of the index guards")
    parser.add_argument("guarded")
    parser.add_argument("bare")
    parser.add_argument("model")
    parser.add_argument("config")
    parser.add_argument("--repeats", type=int, default=10)
    opts = parser.parse_args()

    weights, inputs = reference_data(opts.model, opts.config)

    steps = {}
    for name in ("guarded", "bare"):
        steps[name], _ = compiled_step(
            SimpleNamespace(dir=getattr(opts, name)), weights, inputs)
    losses = {name: step() for name, step in steps.items()}  # warm-up
    before = load_average()
    times = {"guarded": [], "bare": []}
    for r in range(opts.repeats):
        order = ("guarded", "bare") if r % 2 == 0 else ("bare", "guarded")
        for name in order:
            times[name].append(timed(steps[name]))
    after = load_average()

    print("BERT-large, 1 encoder layer (+ embeddings, QA head, loss), "
          "4 x 384 tokens, f32, forward + backward, 1 BLAS thread, %d "
          "interleaved pairs; load average before: %s, after: %s"
          % (opts.repeats, before, after))
    for kind, index in (("CPU", 0), ("wall", 1)):
        med = {n: statistics.median(t[index] for t in ts)
               for n, ts in times.items()}
        pairs = sorted(g[index] / b[index]
                       for g, b in zip(times["guarded"], times["bare"]))
        print("  %-4s time: guarded %8.1f ms, bare %8.1f ms (medians); "
              "ratio of medians %.4f; per-pair ratios: median %.4f, "
              "%.4f to %.4f"
              % (kind, med["guarded"] * 1e3, med["bare"] * 1e3,
                 med["guarded"] / med["bare"], statistics.median(pairs),
                 pairs[0], pairs[-1]))
    print("  losses: guarded %.6f, bare %.6f" % (losses["guarded"],
                                                 losses["bare"]))


if __name__ == "__main__":
    main()
