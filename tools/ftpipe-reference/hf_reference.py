#!/usr/bin/env python3
# hf_reference.py - Hugging Face transformers as the outside truth for model IR
#
# Runs in the test-only reference environment (scripts/setup-reference-env.sh).
# The weights travel in safetensors files whose tensor names are the IR's
# `ftpipe.name`s (HF state-dict names), the format the runtime's checkpoints
# share. Four steps, each its own command so that a test can stop after any:
#
#   reference MODEL.mlir CONFIG.json --weights W --inputs I --outputs O
#       builds the HF model from the same config.json with seeded random weights
#       (no download), writes its parameters to W, random data inputs shaped
#       like MODEL.mlir's data arguments to I, and HF's eager outputs to O.
#   run MODEL.mlir --weights W --inputs I -o OURS [--library LIB]
#       our side, no torch: lowers MODEL.mlir with MLIR 19's CPU pipeline to a
#       shared library (or takes LIB, ftpipe-compile's artifact of MODEL.mlir),
#       loads every `ftpipe.param` argument from W by its `ftpipe.name`, runs
#       it and writes its results to OURS.
#   compare OURS O --rtol R [--atol A]
#       largest error relative to the largest reference value, per output
#       (or, with A, accepted when the largest absolute error is at most A).
#   structure MODEL.mlir CONFIG.json
#       parameter names and shapes one-to-one with HF's, from a model built on
#       the `meta` device (no weights allocated: fine for T5-3B).
#
# Extends tools/ftpipe-model-gen/check-against-hf.py (same pipeline, same
# random weights and inputs) from one in-process check to file-based steps.

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

# Random weights from configs only: never reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memref_abi import call_with_results, descriptor, read_memref  # noqa

PIPELINE = (
    "builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,"
    "tosa-to-tensor),one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
    "func.func(convert-linalg-to-loops),convert-scf-to-cf,expand-strided-metadata,"
    "lower-affine,convert-math-to-llvm,convert-math-to-libm,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,"
    "convert-func-to-llvm,convert-index-to-llvm,reconcile-unrealized-casts)")

ARG_RE = re.compile(
    r'%arg(\d+): tensor<([0-9x]*?)x?(f32|f64|i32|i64)>'
    r'(?: \{ftpipe\.name = "([^"]+)", ftpipe\.param\})? loc\(("[^"]*"|#loc\d*)\)')
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i1": np.bool_,
          "i64": np.int64}


def parse_signature(path):
    """Returns (header line, function name, arguments, result types)."""
    text = open(path).read()
    header = next(l for l in text.splitlines() if "func.func @" in l)
    name = re.search(r"func\.func @(\w+)\(", header).group(1)
    args = []
    for match in ARG_RE.finditer(header):
        index, dims, elem, param, loc = match.groups()
        args.append({"index": int(index),
                     "shape": [int(d) for d in dims.split("x")] if dims else [],
                     "elem": elem, "param": param, "loc": loc.strip('"')})
    results = re.search(r"\) -> \(?(.*?)\)? \{$", header).group(1)
    result_types = [
        ([int(d) for d in dims.split("x")] if dims else [], elem)
        for dims, elem in re.findall(r"tensor<([0-9x]*?)x?(f32|f64)>", results)]
    return text, header, name, args, result_types


# --- the HF side (needs torch and transformers) -----------------------------

def hf_model(config_json, device=None, attn_implementation=None):
    """The HF model of a config.json: BERT QA, GPT-2 LM head, T5 seq2seq,
    Llama and Mistral causal LM."""
    import torch
    import transformers
    fields = {k: v for k, v in config_json.items() if k != "ftpipe"}
    if attn_implementation:
        fields["attn_implementation"] = attn_implementation
    hf_config = transformers.AutoConfig.for_model(**fields)
    cls = {"bert": transformers.BertForQuestionAnswering,
           "gpt2": transformers.GPT2LMHeadModel,
           "t5": transformers.T5ForConditionalGeneration,
           "llama": transformers.LlamaForCausalLM,
           "mistral": transformers.MistralForCausalLM}[config_json["model_type"]]
    if device == "meta":
        with torch.device("meta"):
            return cls(hf_config)
    return cls(hf_config)


def randomize(model, seed):
    """Seeded N(0, 0.2) everywhere: HF's zero biases and unit norms would hide
    mistakes there."""
    import torch
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.2)
    return model.eval()


def make_inputs(args, vocab, seed):
    """Random data inputs by argument name, with padding and ignored labels."""
    rng = np.random.default_rng(seed)
    data = {}
    for arg in args:
        if arg["param"]:
            continue
        name, shape = arg["loc"], arg["shape"]
        if name in ("input_ids", "decoder_input_ids", "labels"):
            value = rng.integers(0, vocab, size=shape)
            if name == "labels":
                value[0, -1] = -100
        elif name == "attention_mask":
            value = np.ones(shape, dtype=np.int64)
            value[-1, -3:] = 0
        elif name == "token_type_ids":
            value = rng.integers(0, 2, size=shape)
        elif name in ("start_positions", "end_positions"):
            # Positions inside the sequence, whatever its length.
            seq = next(a["shape"][-1] for a in args
                       if a["loc"] == "input_ids")
            value = rng.integers(0, seq, size=shape)
            value[-1] = 1000  # clamped to the sequence length, then ignored
        else:
            raise SystemExit("error: unknown data input '%s'" % name)
        data[name] = value.astype(DTYPES[arg["elem"]])
    return data


def hf_outputs(model, family, inputs):
    import torch
    tensors = {k: torch.from_numpy(v.astype(np.int64)) for k, v in inputs.items()}
    with torch.no_grad():
        output = model(**tensors)
    if "labels" in inputs or "start_positions" in inputs:
        values = [output.loss]
    elif family == "bert":
        values = [output.start_logits, output.end_logits]
    else:
        values = [output.logits]
    return {"output%d" % i: v.detach().numpy() for i, v in enumerate(values)}


def cmd_reference(opts):
    import torch
    _, _, _, args, result_types = parse_signature(opts.model)
    config_json = json.load(open(opts.config))
    family = config_json["model_type"]
    elem = {a["elem"] for a in args if a["param"]}
    if len(elem) != 1:
        raise SystemExit("error: %s has no parameters" % opts.model)
    elem = elem.pop()
    model = randomize(hf_model(config_json), opts.seed)
    model = model.double() if elem == "f64" else model.float()
    # named_parameters: one entry per tensor, tied weights under their first
    # name, as the IR names them.
    weights = {name: p.detach().contiguous().numpy()
               for name, p in model.named_parameters()}
    save_file(weights, opts.weights, metadata={
        "seed": str(opts.seed), "config": os.path.basename(opts.config),
        "transformers": __import__("transformers").__version__,
        "torch": torch.__version__})
    inputs = make_inputs(args, config_json["vocab_size"], opts.seed)
    save_file(inputs, opts.inputs)
    outputs = hf_outputs(model, family, inputs)
    if len(outputs) != len(result_types):
        raise SystemExit("error: HF gives %d outputs, the IR %d" %
                         (len(outputs), len(result_types)))
    save_file(outputs, opts.outputs)
    print("reference: %d parameters, %d inputs, %d outputs (torch %s)" % (
        len(weights), len(inputs), len(outputs), torch.__version__))


def cmd_structure(opts):
    _, _, _, args, _ = parse_signature(opts.model)
    config_json = json.load(open(opts.config))
    model = hf_model(config_json, device="meta")
    theirs = {n: list(p.shape) for n, p in model.named_parameters()}
    state_keys = set(model.state_dict().keys())
    ours = {a["param"]: a["shape"] for a in args if a["param"]}
    failures = 0
    for name in sorted(set(ours) | set(theirs)):
        if name not in theirs:
            print("error: '%s' is not an HF parameter" % name)
        elif name not in ours:
            print("error: HF parameter '%s' %s is missing" % (name, theirs[name]))
        elif ours[name] != theirs[name]:
            print("error: '%s' has shape %s, HF %s" % (name, ours[name],
                                                        theirs[name]))
        else:
            continue
        failures += 1
    # The state dict also holds tied aliases (e.g. lm_head.weight) and buffers.
    aliases = sorted(state_keys - set(theirs))
    count = sum(int(np.prod(s)) for s in theirs.values())
    print("structure: %d parameters (%d elements) match one-to-one, %d "
          "mismatches; %d state-dict keys are tied aliases or buffers: %s" % (
              len(ours) - failures, count, failures, len(aliases),
              " ".join(aliases) or "-"))
    return 1 if failures else 0


# --- our side (numpy, ctypes and MLIR 19's tools only) ----------------------

def lower(text, header, workdir, llvm_bin):
    """MLIR 19's CPU pipeline, then a shared library; returns its path."""
    mlir = os.path.join(workdir, "model.mlir")
    open(mlir, "w").write(text.replace(
        header, header[:-2] + " attributes {llvm.emit_c_interface} {", 1))
    steps = [
        [llvm_bin + "/mlir-opt", mlir, "--pass-pipeline=" + PIPELINE,
         "-o", mlir + ".llvm.mlir"],
        [llvm_bin + "/mlir-translate", "--mlir-to-llvmir", mlir + ".llvm.mlir",
         "-o", mlir + ".ll"],
        [llvm_bin + "/llc", "-O2", "-filetype=obj", "-relocation-model=pic",
         mlir + ".ll", "-o", mlir + ".o"],
        # memrefCopy comes from MLIR's C runner utilities.
        ["cc", "-shared", mlir + ".o", "-o", mlir + ".so", "-lm",
         "-L" + llvm_bin + "/../lib", "-Wl,-rpath," + llvm_bin + "/../lib",
         "-lmlir_c_runner_utils"]]
    for step in steps:
        subprocess.run(step, check=True)
    return mlir + ".so"


def cmd_run(opts):
    text, header, name, args, result_types = parse_signature(opts.model)
    weights = load_file(opts.weights)
    inputs = load_file(opts.inputs)
    keep, call_args = [], []
    for arg in args:
        dtype = DTYPES[arg["elem"]]
        if arg["param"]:
            if arg["param"] not in weights:
                raise SystemExit("error: no tensor named '%s' in %s" %
                                 (arg["param"], opts.weights))
            value = weights[arg["param"]]
        else:
            if arg["loc"] not in inputs:
                raise SystemExit("error: no input named '%s' in %s" %
                                 (arg["loc"], opts.inputs))
            value = inputs[arg["loc"]]
        if list(value.shape) != arg["shape"] or value.dtype != dtype:
            raise SystemExit("error: '%s' is %s %s, the IR wants %s %s" % (
                arg["param"] or arg["loc"], value.dtype, list(value.shape),
                np.dtype(dtype), arg["shape"]))
        desc, array = descriptor(value)
        keep += [array, desc]
        call_args.append(ctypes.byref(desc))
    unused = set(weights) - {a["param"] for a in args}
    if unused:
        print("note: %d tensors of %s are not IR parameters: %s" % (
            len(unused), opts.weights, " ".join(sorted(unused))))
    with tempfile.TemporaryDirectory() as workdir:
        library = ctypes.CDLL(opts.library or
                              lower(text, header, workdir, opts.llvm_bin))
        descs = call_with_results(getattr(library, "_mlir_ciface_" + name),
                                  [{"shape": s} for s, _ in result_types],
                                  call_args)
        # The results' buffers stay with the process; it ends right after.
        outputs = {"output%d" % i: read_memref(d, s, DTYPES[e])
                   for i, (d, (s, e)) in enumerate(zip(descs, result_types))}
    save_file(outputs, opts.output)
    print("run: %d parameters loaded by name, %d outputs" % (
        sum(1 for a in args if a["param"]), len(outputs)))


def cmd_compare(opts):
    """Per tensor, the largest error relative to the larger of the tensor's
    largest reference value and --floor times the largest reference gradient
    (`grad.*`) of the file; --floor 0 is purely relative."""
    ours, theirs = load_file(opts.ours), load_file(opts.reference)
    gradients = [float(np.max(np.abs(v))) for k, v in theirs.items()
                 if k.startswith("grad.") and v.size]
    floor = getattr(opts, "floor", 0.0) * max(gradients, default=0.0)
    failures = 0
    for key in sorted(theirs):
        if key not in ours or ours[key].shape != theirs[key].shape:
            print("%s: missing or shaped differently" % key)
            failures += 1
            continue
        a = ours[key].astype(np.float64)
        b = theirs[key].astype(np.float64)
        scale = float(np.max(np.abs(b)))
        if key.startswith("grad."):
            scale = max(scale, floor)
        error = float(np.max(np.abs(a - b))) / scale if scale else float(
            np.max(np.abs(a)))
        # A tensor whose exact value is zero holds rounding noise on both
        # sides: --atol accepts it by its absolute error.
        absolute = float(np.max(np.abs(a - b))) if a.size else 0.0
        verdict = ("ok" if error <= opts.rtol or
                   absolute <= getattr(opts, "atol", 0.0)
                   else "MISMATCH")
        failures += verdict != "ok"
        values = "" if b.shape else " (ours %.9g, reference %.9g)" % (a, b)
        print("%s %s: max rel. error %.3g (tolerance %g)%s %s" % (
            key, "x".join(map(str, b.shape)) or "scalar", error, opts.rtol,
            values, verdict))
    print("compare: %d tensors, %d mismatches" % (len(theirs), failures))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(
        description="Hugging Face transformers as the outside truth for "
                    "FTPipe's model IR")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("reference")
    p.add_argument("model")
    p.add_argument("config")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weights", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--outputs", required=True)
    p = sub.add_parser("run")
    p.add_argument("model")
    p.add_argument("--weights", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("-o", dest="output", required=True)
    p.add_argument("--llvm-bin", default="/usr/lib/llvm-19/bin")
    p.add_argument("--library",
                   help="run this shared library (an ftpipe-compile artifact "
                        "of MODEL.mlir) instead of lowering MODEL.mlir")
    p = sub.add_parser("compare")
    p.add_argument("ours")
    p.add_argument("reference")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=0.0,
                   help="also accept a tensor whose largest absolute error "
                        "is at most this (gradients that are exactly zero)")
    p = sub.add_parser("structure")
    p.add_argument("model")
    p.add_argument("config")
    opts = parser.parse_args()
    return {"reference": cmd_reference, "run": cmd_run, "compare": cmd_compare,
            "structure": cmd_structure}[opts.command](opts) or 0


if __name__ == "__main__":
    sys.exit(main())
