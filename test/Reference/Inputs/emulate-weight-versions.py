#!/usr/bin/env python3
# emulate-weight-versions.py - what asynchronous pipeline training computes,
# emulated one micro-batch at a time, independently of ftpipe-run's executor:
#
#   emulate-weight-versions.py DIR SCHEDULE --stashing none|stash|2bw
#       --weights W --data D --micro-batches M --lr X -o OUT
#
# SCHEDULE is the per-device action lists that ftpipe-run prints with
# --print-schedule ("device 0: 1F0 1F1 U0 ..."). The weight version a stage
# uses for micro-batch m is the number of updates its device made before the
# action: before F(s, m) for the forward; for the backward the same version
# with stashing (stash, 2bw), or the number before B(s, m) without (none).
# Version k is the weights after k optimizer steps, the same on every device
# (copies of a tied parameter get the owner's update). The emulation runs the
# micro-batches in order, each through all stage forwards (the manifest's
# stage order) and backwards (reverse) of DIR's artifacts over the runtime's
# in-process mailbox, with each stage's parameters taken from its version;
# step k's gradient is the mean over its M micro-batches of every stage's
# gradients (copies added), and AdamW (torch.optim.AdamW's formula, written
# here in numpy) makes version k + 1. Writes the final weights to OUT.
#
# With --then DIR2 SCHEDULE2, the run migrates (ftpipe-run --migrate-at,
# docs/Migration.md): SCHEDULE's lists drain (every micro-batch of its steps
# finishes, updates included), then DIR2's plan runs SCHEDULE2 (lists that
# ftpipe-run prints for the remaining steps, micro-batches and updates
# counted from 0 there), whose versions count on from the updates before,
# with the same AdamW state.

import argparse
import ctypes
import os
import re
import sys

# One BLAS thread, as ftpipe-run runs each device: OpenBLAS's results depend
# on how many threads split a product.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402

# Calls of the artifacts' entry points: the in-process driver's.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "ftpipe-compile"))
from run_artifacts import arguments, call, load  # noqa: E402


def versions(schedule_text, stashing):
    """(stage, mb) -> (forward version, backward version)."""
    forward, backward = {}, {}
    for line in schedule_text.splitlines():
        if not line.startswith("device"):
            continue
        updates = 0
        for action in line.split(":", 1)[1].split():
            match = re.fullmatch(r"(\d+)([FB])(\d+)", action)
            if not match:
                updates += action.startswith("U")
                continue
            key = (int(match.group(1)), int(match.group(3)))
            (forward if match.group(2) == "F" else backward)[key] = updates
    if stashing != "none":
        backward = dict(forward)
    return forward, backward


def adamw(params, grads, state, step, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """torch.optim.AdamW without weight decay, one step (step from 1), in
    f64 per element; the moments are stored in f32, as torch stores them."""
    for name, grad in grads.items():
        m, v = state.setdefault(name, (np.zeros_like(grad, np.float32),
                                       np.zeros_like(grad, np.float32)))
        g = grad.astype(np.float64)
        m64 = beta1 * m.astype(np.float64) + (1 - beta1) * g
        v64 = beta2 * v.astype(np.float64) + (1 - beta2) * g * g
        m[:], v[:] = m64, v64
        denom = np.sqrt(v64) / np.sqrt(1 - beta2 ** step) + eps
        params[name] = (params[name].astype(np.float64) -
                        lr / (1 - beta1 ** step) * m64 / denom
                        ).astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("schedule")
    parser.add_argument("--stashing", choices=["none", "stash", "2bw"],
                        required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--micro-batches", type=int, required=True)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--then", nargs=2, metavar=("DIR2", "SCHEDULE2"))
    parser.add_argument("-o", dest="output", required=True)
    opts = parser.parse_args()

    history = [load_file(opts.weights)]
    data = load_file(opts.data)
    samples = next(iter(data.values())).shape[0]
    state, sums = {}, {}
    first, behind = 0, []
    for directory, schedule in [(opts.dir, opts.schedule)] + (
            [tuple(opts.then)] if opts.then else []):
        first = emulate(directory, schedule, opts, history, data, samples,
                        state, sums, first, behind)
    save_file(history[-1], opts.output)
    print("emulated: %d micro-batches, %d updates, versions used per "
          "micro-batch: %d to %d behind" % (
              first, len(history) - 1, min(behind), max(behind)))


def emulate(directory, schedule, opts, history, data, samples, state, sums,
            first, behind):
    """Runs `schedule`'s micro-batches on `directory`'s artifacts, counted
    from micro-batch `first` and version len(history) - 1 of the run;
    returns the next micro-batch."""
    manifest, libraries, entries, stages = load(directory)
    base = len(history) - 1
    forward_version, backward_version = versions(open(schedule).read(),
                                                 opts.stashing)
    micro_batches = 1 + max(m for _, m in forward_version)
    behind.extend(m // opts.micro_batches - v
                  for (_, m), v in forward_version.items())
    batch = next(iter(manifest["inputs"].values()))["shape"][0]
    abi = libraries[0]
    abi.ftpipe_rt_local_end.restype = ctypes.c_int64

    for local in range(micro_batches):
        mb = first + local
        forward = {s: history[base + v]
                   for (s, m), v in forward_version.items() if m == local}
        backward = {s: history[base + v]
                    for (s, m), v in backward_version.items() if m == local}
        rows = [(mb * batch + i) % samples for i in range(batch)]
        inputs = {name: value[rows] for name, value in data.items()}
        abi.ftpipe_rt_local_begin(ctypes.c_int64(len(libraries)))
        saved = {}
        for s in manifest["stage_order"]:
            entry = entries[stages[s]["forward"]]
            abi.ftpipe_rt_local_select(ctypes.c_int64(entry["device"]))
            results = call(libraries[entry["device"]], entry, arguments(
                entry, forward[s], inputs, [], mb))
            saved[s] = [v for r, v in zip(entry["results"], results)
                        if r["kind"] == "saved"]
        for s in reversed(manifest["stage_order"]):
            entry = entries[stages[s]["backward"]]
            abi.ftpipe_rt_local_select(ctypes.c_int64(entry["device"]))
            results = call(libraries[entry["device"]], entry, arguments(
                entry, backward[s], inputs, saved[s], mb))
            for r, v in zip(entry["results"], results):
                sums[r["name"]] = sums[r["name"]] + v if r["name"] in sums \
                    else v
        if abi.ftpipe_rt_local_end():
            raise SystemExit("error: a message of micro-batch %d was never "
                             "received" % mb)
        if (mb + 1) % opts.micro_batches == 0:
            step = (mb + 1) // opts.micro_batches
            weights = dict(history[-1])
            adamw(weights, {k: v / np.float32(opts.micro_batches)
                            for k, v in sums.items()}, state, step, opts.lr)
            history.append(weights)
            sums.clear()
    return first + micro_batches


if __name__ == "__main__":
    main()
