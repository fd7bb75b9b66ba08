#!/usr/bin/env python3
"""Writes a changed copy of a safetensors file, for tests of refusals.

edit-safetensors.py IN OUT [--drop NAME] [--rename OLD:NEW]
                           [--add NAME:DTYPE:D0xD1] [--retype NAME:DTYPE]
                           [--reshape NAME:D0xD1] [--set NAME:INDEX:VALUE]

Standard library only. Added, retyped and reshaped tensors hold zeros;
--set writes VALUE (nan, inf, 30522, ...) at flat element INDEX.
"""

import argparse
import json
import struct

FORMATS = {"F64": "<d", "F32": "<f", "I64": "<q", "I32": "<i", "I16": "<h",
           "I8": "<b"}
SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "BOOL": 1}


def shape_of(text):
    return [int(d) for d in text.split("x")] if text else []


def elements(shape):
    count = 1
    for d in shape:
        count *= d
    return count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--drop", action="append", default=[])
    parser.add_argument("--rename", action="append", default=[])
    parser.add_argument("--add", action="append", default=[])
    parser.add_argument("--retype", action="append", default=[])
    parser.add_argument("--reshape", action="append", default=[])
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args()

    with open(args.input, "rb") as f:
        blob = f.read()
    length = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + length])
    data = blob[8 + length:]
    metadata = header.pop("__metadata__", None)
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        tensors[name] = [info["dtype"], info["shape"], data[begin:end]]

    for name in args.drop:
        del tensors[name]
    for item in args.rename:
        old, new = item.split(":")
        tensors[new] = tensors.pop(old)
    for item in args.add:
        name, dtype, shape = item.split(":")
        tensors[name] = [dtype, shape_of(shape), None]
    for item in args.retype:
        name, dtype = item.split(":")
        tensors[name][0], tensors[name][2] = dtype, None
    for item in args.reshape:
        name, shape = item.split(":")
        tensors[name][1], tensors[name][2] = shape_of(shape), None

    for item in args.set:
        name, index, value = item.split(":")
        dtype, shape, content = tensors[name]
        size = SIZES[dtype]
        if content is None:
            content = bytes(elements(shape) * size)
        number = float(value) if dtype.startswith("F") else int(value)
        at = int(index) * size
        packed = struct.pack(FORMATS[dtype], number)
        tensors[name][2] = content[:at] + packed + content[at + size:]

    out_header, out_data = {}, b""
    if metadata is not None:
        out_header["__metadata__"] = metadata
    for name in sorted(tensors):
        dtype, shape, content = tensors[name]
        if content is None:
            content = bytes(elements(shape) * SIZES[dtype])
        out_header[name] = {"dtype": dtype, "shape": shape,
                            "data_offsets": [len(out_data),
                                             len(out_data) + len(content)]}
        out_data += content
    text = json.dumps(out_header).encode()
    text += b" " * (-len(text) % 8)
    with open(args.output, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + out_data)


if __name__ == "__main__":
    main()
