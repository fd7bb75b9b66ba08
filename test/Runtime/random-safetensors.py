#!/usr/bin/env python3
"""Writes a safetensors file of seeded random F32 tensors, for tests.

random-safetensors.py OUT NAME:D0xD1 [NAME:D0xD1 ...] [--seed S]

Standard library only; values uniform in [-1, 1).
"""

import argparse
import json
import random
import struct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("output")
    parser.add_argument("tensors", nargs="+")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    header, data = {}, b""
    for spec in opts.tensors:
        name, dims = spec.split(":")
        shape = [int(d) for d in dims.split("x")]
        count = 1
        for d in shape:
            count *= d
        values = struct.pack("<%df" % count,
                             *[rng.uniform(-1, 1) for _ in range(count)])
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(values)]}
        data += values
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(opts.output, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text + data)


if __name__ == "__main__":
    main()
