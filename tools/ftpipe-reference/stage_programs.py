#!/usr/bin/env python3
# stage_programs.py - runs FTPipe's differentiated and per-device IR on the CPU
#
# Our side of the gradient checks (docs/StagePrograms.md), with numpy, ctypes,
# MLIR 19's tools and FTPipe's own ftpipe-opt and FTPipeStageABI only (no
# torch). Tensors travel in safetensors files named as the IR names them.
#
#   grads MODEL.mlir --weights W --inputs I -o OUT
#       differentiates the unpartitioned model (ftpipe-differentiate), runs
#       the model's adjoint with a loss gradient of 1 and writes `loss` and
#       `grad.<parameter name>`.
#   pipeline MODEL.mlir --weights W --inputs I -o OUT --partition "PASSES"
#       partitions with the given ftpipe-opt passes, outlines, differentiates
#       (--recompute true|false), splits per device, lowers the transfers to
#       the runtime's C ABI and runs every device's entry points in one
#       process over the in-process mailbox: all forwards in the stages'
#       dependency order, then all backwards in reverse; sums the gradients of
#       parameters that several devices hold (tied weights); writes the same
#       tensors as `grads`.
#   fd MODEL.mlir --weights W --inputs I --grads G --entries N --seed S
#       central finite differences of the forward (f64 models) on N random
#       entries of random parameters, against the gradients in G.
#   hf-grads MODEL.mlir CONFIG.json --weights W --inputs I -o OUT
#       (reference environment) Hugging Face transformers' loss.backward()
#       on the same weights and inputs, in the same format.
#   compare OURS REFERENCE --rtol R [--floor F]
#       hf_reference.py's compare: per tensor, the largest error relative to
#       the larger of the tensor's largest reference value and F times the
#       largest reference gradient (F = 0: purely relative). A floor keeps
#       gradients that are mathematically zero (BERT's key biases: softmax
#       ignores a shift) from comparing rounding noise with rounding noise.

import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import PIPELINE, DTYPES, cmd_compare  # noqa: E402
from memref_abi import call_with_results, descriptor, read_memref  # noqa

HERE = os.path.dirname(os.path.abspath(__file__))


# --- function signatures of the IR we generate ------------------------------

def split_top(text):
    """Splits at commas outside brackets and quotes."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, c in enumerate(text):
        if c == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and c in "<({[":
            depth += 1
        elif not quoted and c in ">)}]":
            depth -= 1
        elif not quoted and c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def closing(text, start):
    """Index of the bracket that closes text[start]."""
    pairs = {"(": ")", "{": "}", "<": ">", "[": "]"}
    depth, quoted = 0, False
    for i in range(start, len(text)):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif not quoted and c in pairs:
            depth += 1
        elif not quoted and c in pairs.values():
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced brackets")


TYPE_RE = re.compile(r"^(?:tensor<([0-9x]*?)x?(f32|f64|i1|i32|i64)>|(index))")


def parse_value(text):
    """A typed value of a signature: {shape, elem, attrs}."""
    text = re.sub(r"^%\w+:\s*", "", text)
    match = TYPE_RE.match(text)
    if not match:
        raise ValueError("unsupported type in signature: " + text[:60])
    dims, elem, index = match.groups()
    value = {"shape": [], "elem": "index"} if index else {
        "shape": [int(d) for d in dims.split("x")] if dims else [],
        "elem": elem}
    attrs = {}
    brace = text.find("{", match.end())
    if brace >= 0 and not text[match.end():brace].strip().startswith("loc"):
        body = text[brace + 1:closing(text, brace)]
        for item in split_top(body):
            key, _, val = item.partition("=")
            val = val.strip()
            if val.startswith('"'):
                val = val[1:-1]
            elif val:
                val = int(val.split(":")[0])
            else:
                val = True
            attrs[key.strip()] = val
    value["attrs"] = attrs
    return value


def signatures(text):
    """name -> (public, arguments, results, function attributes)."""
    functions = {}
    for match in re.finditer(r"func\.func (private )?@(\w+)\(", text):
        if match.group(1):
            continue
        open_paren = match.end() - 1
        close = closing(text, open_paren)
        args = [parse_value(a) for a in split_top(text[open_paren + 1:close])]
        rest = text[close + 1:text.index("\n", close)]
        results = []
        arrow = re.match(r"\s*->\s*", rest)
        if arrow:
            rest = rest[arrow.end():]
            if rest.startswith("("):
                end = closing(rest, 0)
                results = [parse_value(r) for r in split_top(rest[1:end])]
                rest = rest[end + 1:]
            else:
                match_type = TYPE_RE.match(rest)
                results = [parse_value(rest[:match_type.end()])]
                rest = rest[match_type.end():]
        functions[match.group(2)] = (args, results, rest)
    return functions


# --- building and calling ------------------------------------------------------

def tools(opts):
    return os.path.join(opts.build, "bin", "ftpipe-opt"), opts.llvm_bin


def ftpipe_opt(opts, source, passes, output):
    subprocess.run([tools(opts)[0], source, *passes, "-o", output], check=True)


def build_library(opts, source, entries, workdir):
    """Lowers `source` (tensor IR) to a shared library exporting the C
    interface of `entries`."""
    text = open(source).read()
    for name in entries:
        header = re.search(r"func\.func @%s\(.*$" % name, text, re.M).group(0)
        if " attributes {" in header:
            new = header.replace(" attributes {",
                                 " attributes {llvm.emit_c_interface, ", 1)
        else:
            new = header[:-2] + " attributes {llvm.emit_c_interface} {"
        text = text.replace(header, new, 1)
    mlir = os.path.join(workdir, "lowered.mlir")
    open(mlir, "w").write(text)
    llvm_bin = opts.llvm_bin
    lib_dir = os.path.join(opts.build, "lib")
    steps = [
        [tools(opts)[0], mlir, "--ftpipe-lower-transfers", "-o", mlir + ".t"],
        [llvm_bin + "/mlir-opt", mlir + ".t", "--allow-unregistered-dialect",
         "--pass-pipeline=" + PIPELINE,
         "-o", mlir + ".llvm"],
        [llvm_bin + "/mlir-translate", "--mlir-to-llvmir", mlir + ".llvm",
         "-o", mlir + ".ll"],
        [llvm_bin + "/llc", "-O2", "-filetype=obj", "-relocation-model=pic",
         mlir + ".ll", "-o", mlir + ".o"],
        ["cc", "-shared", mlir + ".o", "-o", mlir + ".so", "-lm",
         "-L" + llvm_bin + "/../lib", "-Wl,-rpath," + llvm_bin + "/../lib",
         "-lmlir_c_runner_utils", "-L" + lib_dir, "-Wl,-rpath," + lib_dir,
         "-lFTPipeStageABI"]]
    for step in steps:
        subprocess.run(step, check=True)
    return ctypes.CDLL(mlir + ".so")


def call(library, name, signature, values):
    """Calls `_mlir_ciface_name` with `values` (numpy arrays or ints, one per
    argument); returns the results as numpy arrays."""
    args, results, _ = signature
    keep, call_args = [], []
    for arg, value in zip(args, values):
        if arg["elem"] == "index":
            call_args.append(ctypes.c_int64(value))
            continue
        # np.array, not ascontiguousarray: that one makes scalars 1-d.
        array = np.array(value, dtype=DTYPES[arg["elem"]], order="C")
        if list(array.shape) != arg["shape"]:
            raise SystemExit("error: %s argument shaped %s, the IR wants %s" %
                             (name, list(array.shape), arg["shape"]))
        desc, array = descriptor(array)
        keep += [array, desc]
        call_args.append(ctypes.byref(desc))
    descs = call_with_results(getattr(library, "_mlir_ciface_" + name),
                              results, call_args)
    # The results' buffers stay with the process (it is short-lived).
    return [read_memref(d, r["shape"], DTYPES[r["elem"]])
            for d, r in zip(descs, results)]


def model_arguments(args, weights, inputs):
    """Values for a function's arguments: parameters by ftpipe.name, data
    inputs by ftpipe.input (or the model's argument names)."""
    values = []
    for arg in args:
        attrs = arg["attrs"]
        if "ftpipe.name" in attrs:
            values.append(weights[attrs["ftpipe.name"]])
        elif "ftpipe.input" in attrs:
            values.append(inputs[attrs["ftpipe.input"]])
        else:
            raise SystemExit("error: argument with neither ftpipe.name nor "
                             "ftpipe.input: %s" % attrs)
    return values


def name_inputs(text, path_out):
    """Gives the model's data arguments their names (ftpipe.input) from
    their locations, so that every tool reads them the same way."""
    header = next(l for l in text.splitlines() if "func.func @" in l)
    def add(match):
        return match.group(0)
    named = re.sub(
        r'(%arg\d+: tensor<[0-9x]*x?i(?:32|64)>) loc\("(\w+)"\)',
        lambda m: '%s {ftpipe.input = "%s"} loc("%s")' % (m.group(1),
                                                          m.group(2),
                                                          m.group(2)),
        header)
    open(path_out, "w").write(text.replace(header, named, 1))


# --- commands ------------------------------------------------------------------

def cmd_grads(opts):
    with tempfile.TemporaryDirectory() as work:
        named = os.path.join(work, "model.mlir")
        name_inputs(open(opts.model).read(), named)
        diff = os.path.join(work, "diff.mlir")
        ftpipe_opt(opts, named, ["--ftpipe-differentiate"], diff)
        text = open(diff).read()
        sigs = signatures(text)
        adjoint = next(n for n in sigs if n.endswith("_adjoint"))
        model = adjoint[:-len("_adjoint")]
        library = build_library(opts, diff, [model, adjoint], work)
        weights, inputs = load_file(opts.weights), load_file(opts.inputs)
        values = model_arguments(sigs[model][0], weights, inputs)
        loss = call(library, model, sigs[model], values)[0]
        seed = np.ones_like(loss)
        grads = call(library, adjoint, sigs[adjoint], values + [seed])
        params = [a["attrs"]["ftpipe.name"] for a in sigs[model][0]
                  if "ftpipe.param" in a["attrs"]]
    out = {"loss": np.asarray(loss)}
    out.update({"grad." + n: g for n, g in zip(params, grads)})
    save_file(out, opts.output)
    print("grads: loss %.9g, %d parameter gradients" % (float(loss),
                                                          len(params)))


def cmd_pipeline(opts):
    import shlex
    with tempfile.TemporaryDirectory() as work:
        named = os.path.join(work, "model.mlir")
        name_inputs(open(opts.model).read(), named)
        split = os.path.join(work, "split.mlir")
        passes = shlex.split(opts.partition) + [
            "--ftpipe-outline-stages",
            "--ftpipe-differentiate=recompute=" + opts.recompute,
            "--ftpipe-split-devices"]
        ftpipe_opt(opts, named, passes, split)
        text = open(split).read()
        if opts.keep:
            open(opts.keep, "w").write(text)
        sigs = signatures(text)
        order = [int(s) for s in re.search(
            r"ftpipe\.stage_order = array<i64(?:: ([0-9, ]*))?>",
            text).group(1).split(",")]
        devices = {}
        for name, (_, _, attrs) in sigs.items():
            match = re.search(r"ftpipe\.device = (\d+)", attrs)
            stage = re.match(r"stage(\d+)_forward$", name)
            if match and stage:
                devices[int(stage.group(1))] = int(match.group(1))
        entries = [n for n in sigs if re.match(r"stage\d+_(forward|backward)$",
                                               n)]
        library = build_library(opts, split, entries, work)
        weights, inputs = load_file(opts.weights), load_file(opts.inputs)
        abi = ctypes.CDLL(os.path.join(opts.build, "lib",
                                       "libFTPipeStageABI.so"))
        abi.ftpipe_rt_local_begin(ctypes.c_int64(max(devices.values()) + 1))
        saved, loss, grads = {}, None, {}
        for stage in order:
            name = "stage%d_forward" % stage
            abi.ftpipe_rt_local_select(ctypes.c_int64(devices[stage]))
            args = sigs[name][0]
            results = call(library, name, sigs[name],
                           [0] + model_arguments(args[1:], weights, inputs))
            if sigs[name][1] and "ftpipe.loss" in sigs[name][1][0]["attrs"]:
                loss, results = results[0], results[1:]
            saved[stage] = results
        for stage in reversed(order):
            name = "stage%d_backward" % stage
            abi.ftpipe_rt_local_select(ctypes.c_int64(devices[stage]))
            args = [a for a in sigs[name][0][1:]
                    if "ftpipe.saved" not in a["attrs"]]
            results = call(library, name, sigs[name],
                           [0] + model_arguments(args, weights, inputs) +
                           saved[stage])
            for result, value in zip(sigs[name][1], results):
                key = "grad." + result["attrs"]["ftpipe.grad"]
                grads[key] = grads[key] + value if key in grads else value
        pending = abi.ftpipe_rt_local_end()
        if pending:
            raise SystemExit("error: %d messages were sent and never "
                             "received" % pending)
    out = {"loss": np.asarray(loss)}
    out.update(grads)
    save_file(out, opts.output)
    print("pipeline: %d stages on %d devices, loss %.9g, %d parameter "
          "gradients" % (len(order), len(set(devices.values())), float(loss),
                         len(grads)))


def cmd_fd(opts):
    """Central differences in f64 on random parameter entries."""
    with tempfile.TemporaryDirectory() as work:
        named = os.path.join(work, "model.mlir")
        name_inputs(open(opts.model).read(), named)
        sigs = signatures(open(named).read())
        model = next(iter(sigs))
        library = build_library(opts, named, [model], work)
        weights, inputs = load_file(opts.weights), load_file(opts.inputs)
        grads = load_file(opts.grads)
        args = sigs[model][0]
        rng = np.random.default_rng(opts.seed)
        names = sorted(a["attrs"]["ftpipe.name"] for a in args
                       if "ftpipe.param" in a["attrs"])
        worst = 0.0
        for _ in range(opts.entries):
            name = names[rng.integers(len(names))]
            index = tuple(int(rng.integers(s)) for s in weights[name].shape)
            losses = []
            for sign in (1, -1):
                shifted = dict(weights)
                shifted[name] = weights[name].copy()
                shifted[name][index] += sign * opts.step
                values = model_arguments(args, shifted, inputs)
                losses.append(float(call(library, model, sigs[model],
                                         values)[0]))
            numeric = (losses[0] - losses[1]) / (2 * opts.step)
            ours = float(grads["grad." + name][index])
            error = abs(numeric - ours) / max(abs(numeric), opts.floor)
            worst = max(worst, error)
            print("%s%s: ours %.12g, finite differences %.12g, rel. error "
                  "%.3g" % (name, list(index), ours, numeric, error))
    verdict = "ok" if worst <= opts.rtol else "MISMATCH"
    print("fd: %d entries, worst rel. error %.3g (tolerance %g) %s" % (
        opts.entries, worst, opts.rtol, verdict))
    return 0 if verdict == "ok" else 1


def cmd_hf_grads(opts):
    import json
    import torch
    from hf_reference import hf_model
    config_json = json.load(open(opts.config))
    weights, inputs = load_file(opts.weights), load_file(opts.inputs)
    elem = next(iter(weights.values())).dtype
    model = hf_model(config_json)
    model = model.double() if elem == np.float64 else model.float()
    state = {k: torch.from_numpy(v) for k, v in weights.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    params = dict(model.named_parameters())
    absent = [n for n in params if n not in weights]
    if absent or unexpected:
        raise SystemExit("error: weights do not match the HF model: missing "
                         "%s, unexpected %s" % (absent, unexpected))
    model.eval()  # no dropout; gradients still flow
    tensors = {k: torch.from_numpy(v.astype(np.int64))
               for k, v in inputs.items()}
    output = model(**tensors)
    output.loss.backward()
    out = {"loss": output.loss.detach().numpy()}
    for name, param in params.items():
        out["grad." + name] = param.grad.detach().numpy()
    save_file(out, opts.output)
    print("hf-grads: loss %.9g, %d parameter gradients (torch %s)" % (
        float(output.loss), len(params), torch.__version__))


def main():
    parser = argparse.ArgumentParser(
        description="runs FTPipe's differentiated and per-device IR on the CPU")
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("model")
    common.add_argument("--weights", required=True)
    common.add_argument("--inputs", required=True)
    common.add_argument("--build", default=os.environ.get(
        "FTPIPE_BUILD", os.path.join(HERE, "..", "..", "build")))
    common.add_argument("--llvm-bin", default="/usr/lib/llvm-19/bin")
    p = sub.add_parser("grads", parents=[common])
    p.add_argument("-o", dest="output", required=True)
    p = sub.add_parser("pipeline", parents=[common])
    p.add_argument("-o", dest="output", required=True)
    p.add_argument("--partition", required=True)
    p.add_argument("--recompute", default="true", choices=["true", "false"])
    p.add_argument("--keep", help="also write the per-device IR here")
    p = sub.add_parser("fd", parents=[common])
    p.add_argument("--grads", required=True)
    p.add_argument("--entries", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--step", type=float, default=1e-6)
    p.add_argument("--floor", type=float, default=1e-6,
                   help="relative errors use max(|fd|, floor)")
    p.add_argument("--rtol", type=float, default=1e-6)
    p = sub.add_parser("hf-grads")
    p.add_argument("model")
    p.add_argument("config")
    p.add_argument("--weights", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("-o", dest="output", required=True)
    p = sub.add_parser("compare")
    p.add_argument("ours")
    p.add_argument("reference")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--floor", type=float, default=0.0)
    opts = parser.parse_args()
    return {"grads": cmd_grads, "pipeline": cmd_pipeline, "fd": cmd_fd,
            "hf-grads": cmd_hf_grads, "compare": cmd_compare}[
                opts.command](opts) or 0


if __name__ == "__main__":
    sys.exit(main())
