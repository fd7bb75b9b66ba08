#!/usr/bin/env python3
# freezing_data.py DIR SAMPLES SEED OUT - the synthetic question-answering
# task of bench/freezing.sh, with the standard library only: for the BERT
# artifacts in DIR (its manifest's data inputs), SAMPLES sequences of random
# tokens (3 .. the vocabulary) in which token 1 marks the answer's start and
# token 2 its end (start < end, both random); start_positions and
# end_positions are the markers' positions, the attention mask is ones and
# the token types zeros. Written as safetensors.
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools", "ftpipe-compile"))
import ftpipe_manifest  # noqa: E402

directory, samples, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
inputs = ftpipe_manifest.load(directory)["inputs"]
seq = inputs["input_ids"]["shape"][1]
vocab = inputs["input_ids"].get("index_bound", 512)
rng = random.Random(seed)
ids, starts, ends = [], [], []
for _ in range(samples):
    tokens = [rng.randrange(3, vocab) for _ in range(seq)]
    start = rng.randrange(0, seq - 1)
    end = rng.randrange(start + 1, seq)
    tokens[start], tokens[end] = 1, 2
    ids += tokens
    starts.append(start)
    ends.append(end)
values = {"input_ids": ids, "attention_mask": [1] * (samples * seq),
          "token_type_ids": [0] * (samples * seq),
          "start_positions": starts, "end_positions": ends}
header, blobs, offset = {}, [], 0
for name in sorted(inputs):
    if inputs[name]["dtype"] != "i32":
        sys.exit("error: %s is %s, expected i32" % (name, inputs[name]["dtype"]))
    shape = [samples] + inputs[name]["shape"][1:]
    blob = struct.pack("<%di" % len(values[name]), *values[name])
    header[name] = {"dtype": "I32", "shape": shape,
                    "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
