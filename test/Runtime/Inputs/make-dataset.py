#!/usr/bin/env python3
# make-dataset.py DIR SAMPLES OUT [--varied] - a data set for the artifacts
# in DIR with the standard library only: every data input of
# DIR/manifest.json with a leading dimension of SAMPLES instead of the
# micro-batch's, all zeros (token 0, position 0: valid for every tiny model),
# in the safetensors format. With --varied, an input with an `index_bound`
# holds (7 i + 3 j) mod bound at element j of sample i instead, so samples
# differ.
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "ftpipe-compile"))
import ftpipe_manifest  # noqa: E402

SIZES = {"i32": ("I32", 4), "i64": ("I64", 8), "f32": ("F32", 4),
         "f64": ("F64", 8), "i1": ("BOOL", 1)}
manifest = ftpipe_manifest.load(sys.argv[1])
samples = int(sys.argv[2])
varied = sys.argv[4:] == ["--varied"]
FORMATS = {"I32": "<i", "I64": "<q"}
header, blobs, offset = {}, [], 0
for name, tensor in sorted(manifest["inputs"].items()):
    dtype, size = SIZES[tensor["dtype"]]
    shape = [samples] + tensor["shape"][1:]
    count = 1
    for d in shape:
        count *= d
    header[name] = {"dtype": dtype, "shape": shape,
                    "data_offsets": [offset, offset + count * size]}
    bound = tensor.get("index_bound")
    if varied and bound and dtype in FORMATS:
        per = count // samples
        blobs.append(b"".join(struct.pack(FORMATS[dtype],
                                          (7 * (k // per) + 3 * (k % per)) % bound)
                              for k in range(count)))
    else:
        blobs.append(bytes(count * size))
    offset += count * size
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(sys.argv[3], "wb") as out:
    out.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
