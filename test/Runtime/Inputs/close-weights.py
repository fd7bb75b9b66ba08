"""close-weights.py A B TOLERANCE: the F32 tensors of two safetensors files
(the same names and shapes) agree within TOLERANCE relative to B's values
(|a - b| <= TOLERANCE * (1e-3 + |b|)); prints how many tensors and the largest
relative difference, or the first tensor that differs and exits 1. Plain
Python (struct), so the runtime tests need no numpy."""

import json
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] != "F32":
            sys.exit("%s: %s is %s, not F32" % (path, name, entry["dtype"]))
        begin, end = entry["data_offsets"]
        count = (end - begin) // 4
        tensors[name] = (entry["shape"],
                         struct.unpack("<%df" % count, data[begin:end]))
    return tensors


a, b = load(sys.argv[1]), load(sys.argv[2])
tolerance = float(sys.argv[3])
if sorted(a) != sorted(b):
    sys.exit("the files hold other tensors: %s / %s" % (sorted(a), sorted(b)))
worst = 0.0
for name in sorted(a):
    if a[name][0] != b[name][0]:
        sys.exit("%s: shape %s / %s" % (name, a[name][0], b[name][0]))
    for x, y in zip(a[name][1], b[name][1]):
        difference = abs(x - y) / (1e-3 + abs(y))
        worst = max(worst, difference)
        if difference > tolerance:
            sys.exit("%s differs: %r / %r" % (name, x, y))
print("%d tensors agree within %g" % (len(a), tolerance))
