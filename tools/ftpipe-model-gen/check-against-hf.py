#!/usr/bin/env python3
# check-against-hf.py - run generated model IR against Hugging Face transformers
#
# A developer check, not part of CI (it needs torch and transformers, which the
# project does not install): generates a bundled model with --loss, lowers it
# with mlir-opt-19's CPU pipeline to a shared library, feeds it the weights of
# a randomly initialised HF model built from the same config.json (matched by
# `ftpipe.name`) and the same random inputs, and compares the loss (and, with
# --logits, every output element of the model without --loss) with HF's.
#
#   /usr/bin/python3 tools/ftpipe-model-gen/check-against-hf.py \
#       --tool build/bin/ftpipe-model-gen bert-tiny gpt2-tiny t5-tiny
#   /usr/bin/python3 tools/ftpipe-model-gen/check-against-hf.py \
#       --tool build/bin/ftpipe-model-gen t5-tiny \
#       --gen-flags="--micro-batch-size=3 --seq-len=70 --decoder-seq-len=40"
#
# Tested with Debian's python3-torch 1.13 and transformers 4.36.

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import transformers

LLVM_BIN = "/usr/lib/llvm-19/bin"
# The lowering pipeline, the signature pattern, the data inputs and the memref
# descriptors are shared with the reference steps that lit runs.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "ftpipe-reference"))
from hf_reference import (ARG_RE, PIPELINE, descriptor,  # noqa: E402
                          make_inputs, memref_struct, read_memref)


def build_library(tool, model, flags, workdir):
    """Generates, lowers and links the model; returns (library, signature)."""
    # dlopen returns an already loaded library for a known path: one path per
    # variant.
    mlir = os.path.join(workdir, "-".join([model] + flags) + ".mlir")
    subprocess.run([tool, model, "--quiet", "-o", mlir] + flags, check=True)
    text = open(mlir).read()
    header = next(l for l in text.splitlines() if "func.func @" in l)
    name = re.search(r"func\.func @(\w+)\(", header).group(1)
    args = []
    for match in ARG_RE.finditer(header):
        index, dims, elem, param, loc = match.groups()
        shape = [int(d) for d in dims.split("x")] if dims else []
        args.append({"index": int(index), "shape": shape, "elem": elem,
                     "param": param, "loc": loc.strip('"')})
    results = re.search(r"\) -> \(?(.*?)\)? \{$", header).group(1)
    text = text.replace(header, header[:-2] +
                        " attributes {llvm.emit_c_interface} {", 1)
    open(mlir, "w").write(text)
    llvm_mlir = mlir + ".llvm.mlir"
    subprocess.run([LLVM_BIN + "/mlir-opt", mlir, "--pass-pipeline=" + PIPELINE,
                    "-o", llvm_mlir], check=True)
    subprocess.run([LLVM_BIN + "/mlir-translate", "--mlir-to-llvmir", llvm_mlir,
                    "-o", mlir + ".ll"], check=True)
    subprocess.run([LLVM_BIN + "/llc", "-O2", "-filetype=obj",
                    "-relocation-model=pic", mlir + ".ll", "-o", mlir + ".o"],
                   check=True)
    # memrefCopy comes from MLIR's C runner utilities.
    subprocess.run(["cc", "-shared", mlir + ".o", "-o", mlir + ".so", "-lm",
                    "-L/usr/lib/llvm-19/lib", "-Wl,-rpath,/usr/lib/llvm-19/lib",
                    "-lmlir_c_runner_utils"], check=True)
    return ctypes.CDLL(mlir + ".so"), name, args, results


def hf_model(config_json):
    family = config_json["model_type"]
    hf_config = transformers.AutoConfig.for_model(**{
        k: v for k, v in config_json.items() if k != "ftpipe"})
    cls = {"bert": transformers.BertForQuestionAnswering,
           "gpt2": transformers.GPT2LMHeadModel,
           "t5": transformers.T5ForConditionalGeneration}[family]
    model = cls(hf_config)
    # Random, non-trivial weights everywhere (HF zero-inits biases and sets
    # LayerNorm weights to one, which would hide mistakes there).
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.2)
    return model.eval()


def run(tool, model_name, element, with_loss, workdir, seed, extra_flags):
    models_dir = os.path.join(os.path.dirname(__file__), "..", "..", "models")
    config_json = json.load(open(os.path.join(models_dir, model_name + ".json")))
    family = config_json["model_type"]
    flags = ["--element-type=" + element] + (["--loss"] if with_loss else [])
    flags += extra_flags
    lib, name, args, results = build_library(tool, model_name, flags, workdir)

    torch.manual_seed(seed)
    model = hf_model(config_json)
    dtype = np.float64 if element == "f64" else np.float32
    model = model.double() if element == "f64" else model.float()
    state = model.state_dict()
    data = make_inputs(args, config_json["vocab_size"], seed)

    keep = []
    call_args = []
    for arg in args:
        if arg["param"]:
            value = state[arg["param"]].detach().numpy().astype(dtype)
            assert list(value.shape) == arg["shape"], arg
        else:
            value = data[arg["loc"]]
        desc, array = descriptor(value)
        keep.append(array)
        call_args.append(ctypes.byref(desc))
        keep.append(desc)

    result_types = re.findall(r"tensor<([0-9x]*?)x?(?:f32|f64)>", results)
    result_shapes = [[int(d) for d in r.split("x")] if r else []
                     for r in result_types]
    if len(result_shapes) == 1:
        out = memref_struct(len(result_shapes[0]))()
    else:
        out_type = type("Results", (ctypes.Structure,), {"_fields_": [
            ("r%d" % i, memref_struct(len(s))) for i, s in enumerate(result_shapes)]})
        out = out_type()
    getattr(lib, "_mlir_ciface_" + name)(ctypes.byref(out), *call_args)
    if len(result_shapes) == 1:
        ours = [read_memref(out, result_shapes[0], dtype)]
    else:
        ours = [read_memref(getattr(out, "r%d" % i), s, dtype)
                for i, s in enumerate(result_shapes)]

    inputs = {k: torch.from_numpy(v.astype(np.int64)) for k, v in data.items()}
    with torch.no_grad():
        output = model(**inputs)
    if with_loss:
        theirs = [output.loss.numpy()]
    elif family == "bert":
        theirs = [output.start_logits.numpy(), output.end_logits.numpy()]
    else:
        theirs = [output.logits.numpy()]
    worst = 0.0
    for a, b in zip(ours, theirs):
        scale = float(np.max(np.abs(b)))
        worst = max(worst, float(np.max(np.abs(a - b))) / scale)
    what = "loss" if with_loss else "logits"
    print("%-10s %s %-6s ours %s hf %s max rel. error %.3g" % (
        model_name, element, what,
        np.array2string(ours[0].reshape(-1)[:2], precision=8),
        np.array2string(theirs[0].reshape(-1)[:2], precision=8), worst))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("models", nargs="+")
    parser.add_argument("--tool", default="build/bin/ftpipe-model-gen")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--gen-flags", default="",
                        help="more ftpipe-model-gen options, e.g. "
                             "'--seq-len=48 --decoder-seq-len=40'")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as workdir:
        for model in args.models:
            for element in ("f32", "f64"):
                for with_loss in (True, False):
                    error = run(args.tool, model, element, with_loss, workdir,
                                args.seed, args.gen_flags.split())
                    failures += error > args.tolerance
    print("%d mismatches" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
