"""Budgets for test/Runtime/zero-bubble-budget.test.

zero-bubble-budget.py peaks MANIFEST_DIR LISTS
    Per device, the bytes the printed lists (ftpipe-run --print-schedule)
    hold at most beside the fixed ones, replayed by hand from the manifest's
    device_memory inputs: a forward adds its activations, an I its W buffer
    before the activations go, a W frees its buffer, each action adds its
    working set while it runs (docs/Runtime.md, "Zero bubble").
zero-bubble-budget.py fits MANIFEST_DIR LISTS
    Per device, whether the fixed bytes and the lists' peak are within its
    budget_bytes.
zero-bubble-budget.py squeeze MANIFEST_DIR LISTS DEVICE
    Sets DEVICE's budget_bytes to its fixed bytes plus the lists' peak less
    one byte (so those lists no longer fit there) and prints that room.
"""
import json
import re
import sys


def load(directory):
    with open(directory + "/manifest.json") as f:
        return json.load(f)


def peaks(manifest, lists_path):
    lists = {}
    with open(lists_path) as f:
        for line in f:
            m = re.match(r"device (\d+): (.*)", line.strip())
            if m:
                lists[int(m.group(1))] = m.group(2).split()
    result = {}
    for memory in manifest["device_memory"]:
        d = memory["device"]
        actions = lists[d]
        stages = sorted({int(re.match(r"(\d+)[FBIW]", a).group(1))
                         for a in actions if not a.startswith("U")})
        inputs = {s: memory["inputs"]["stages"][k] for k, s in enumerate(stages)}
        held = peak = 0
        for action in actions:
            m = re.match(r"(\d+)([FBIW])\d+", action)
            if not m:
                continue
            st = inputs[int(m.group(1))]
            kept = st["kept_bytes_per_microbatch"]
            buffer = st["weight_buffer_bytes_per_microbatch"]
            working = st["recompute_peak_bytes"]
            kind = m.group(2)
            if kind == "F":
                held += kept
                peak = max(peak, held + working)
            elif kind == "B":
                peak = max(peak, held + working)
                held -= kept
            elif kind == "I":
                held += buffer
                peak = max(peak, held + working)
                held -= kept
            else:
                peak = max(peak, held + st["weight_working_bytes"])
                held -= buffer
        # The manifest counts its own setup (async: two gradient sets on a
        # device of several stages); a synchronous run keeps one set and no
        # stashed version.
        counted = memory["counted"]
        fixed = (2 * counted["weight_bytes"] + counted["optimizer_bytes"] +
                 counted["reserved_bytes"])
        result[d] = (peak, fixed)
    return result


def main():
    mode, directory, lists_path = sys.argv[1:4]
    manifest = load(directory)
    found = peaks(manifest, lists_path)
    if mode == "peaks":
        for d in sorted(found):
            print("device %d: peak %d fixed %d" % (d, found[d][0], found[d][1]))
        return
    if mode == "fits":
        for memory in manifest["device_memory"]:
            peak, fixed = found[memory["device"]]
            budget = memory["inputs"]["budget_bytes"]
            print("device %d: %s" % (memory["device"],
                                     "fits" if fixed + peak <= budget else "over"))
        return
    device = int(sys.argv[4])
    peak, fixed = found[device]
    for memory in manifest["device_memory"]:
        if memory["device"] == device:
            memory["inputs"]["budget_bytes"] = fixed + peak - 1
            memory["counted"]["budget_bytes"] = fixed + peak - 1
    with open(directory + "/manifest.json", "w") as f:
        json.dump(manifest, f)
    print("device %d room %d" % (device, peak - 1))


main()
