#!/usr/bin/env python3
# make-checkpoint.py CONFIG.json TOKENIZER_DIR OUT [--seed S] [--pad-token-id I]
# A tiny Hugging Face checkpoint as a user downloads one, made by transformers
# itself: the model of CONFIG.json with transformers' seeded initialisation,
# in bfloat16, saved with save_pretrained in shards of at most 20 KB (with
# model.safetensors.index.json), and TOKENIZER_DIR's tokenizer.json beside it.
import argparse
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "tools",
                                "ftpipe-reference"))
from hf_reference import hf_model  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("config")
parser.add_argument("tokenizer")
parser.add_argument("output")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--pad-token-id", type=int)
opts = parser.parse_args()
config = json.load(open(opts.config))
if opts.pad_token_id is not None:
    config["pad_token_id"] = opts.pad_token_id
torch.manual_seed(opts.seed)
model = hf_model(config).to(torch.bfloat16)
model.save_pretrained(opts.output, max_shard_size="20KB")
shutil.copy(os.path.join(opts.tokenizer, "tokenizer.json"), opts.output)
shards = [f for f in os.listdir(opts.output) if f.endswith(".safetensors")]
print("%s: %s in %d bf16 shards, with tokenizer.json" % (
    os.path.basename(opts.output.rstrip("/")), type(model).__name__,
    len(shards)))
