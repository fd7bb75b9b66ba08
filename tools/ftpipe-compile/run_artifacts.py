#!/usr/bin/env python3
# run_artifacts.py - runs the artifacts of ftpipe-compile --target=cpu in one
# process, for one micro-batch, reading nothing but DIR/manifest.json.
#
#   run_artifacts.py DIR --weights W --inputs I -o OUT [--split-backward]
#
# Loads every device's shared library, feeds each entry point its arguments as
# the manifest lists them (parameters from W by Hugging Face name, data inputs
# from I by name, micro-batch 0, saved values from the stage's forward), runs
# all forwards in the manifest's stage order over the runtime's in-process
# mailbox, then all backwards in reverse (with --split-backward, a stage whose
# backward is split runs its input part there instead, and all weight parts
# run after the last input part, on the values the input parts returned), and
# writes OUT (safetensors):
#   - with backward entry points: `loss` (also as `output0`) and
#     `grad.<name>` for every parameter, the gradients of its copies added up
#     (the formats of tools/ftpipe-reference/stage_programs.py and
#     hf_reference.py);
#   - a forward-only artifact: `output<i>` for every result (the format of
#     tools/ftpipe-reference/hf_reference.py run).
# Fails if a message was sent and never received.

import argparse
import ctypes
import os
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "ftpipe-reference"))
from memref_abi import call_with_results, descriptor  # noqa: E402
import ftpipe_manifest  # noqa: E402

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32,
          "i64": np.int64, "i1": np.bool_}


# What the generated code returns for a constant (a global): not to be freed.
GLOBAL_BUFFER = 0xdeadbeef


def view(desc, result):
    shape = result["shape"]
    dtype = DTYPES[result["dtype"]]
    count = int(np.prod(shape)) if shape else 1
    buffer = (ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(
        desc.aligned)
    return np.frombuffer(buffer, dtype=dtype).reshape(shape)


def owned_buffers(descs, arrays):
    """The distinct buffers among the results' that the generated code
    allocated: neither a global nor (part of) an argument."""
    ranges = [(a.ctypes.data, a.ctypes.data + a.nbytes) for a in arrays]
    owned = []
    for desc in descs:
        pointer = desc.allocated
        if (pointer and pointer != GLOBAL_BUFFER and pointer not in owned
                and not any(lo <= pointer < hi for lo, hi in ranges)):
            owned.append(pointer)
    return owned


def release(library, buffers):
    """Frees the buffers that call(library, ..., buffers=...) collected, with
    the artifact's own function (docs/Compile.md)."""
    for pointer in buffers:
        library._mlir_memref_to_llvm_free(ctypes.c_void_p(pointer))
    buffers.clear()


def call(library, entry, values, buffers=None):
    """Calls one entry point. Its results come back as copies and the buffers
    the code allocated for them are freed; with a list `buffers`, they come
    back as views of those buffers instead, which are added to the list for
    release() once the results are no longer needed."""
    keep, arrays, args = [], [], []
    for arg, value in zip(entry["arguments"], values):
        if arg["kind"] == "microbatch":
            args.append(ctypes.c_int64(value))
            continue
        array = np.ascontiguousarray(value, dtype=DTYPES[arg["dtype"]])
        if list(array.shape) != arg["shape"]:
            raise SystemExit("error: %s argument %d is shaped %s, the "
                             "manifest says %s" % (entry["name"], arg["index"],
                                                   list(array.shape),
                                                   arg["shape"]))
        desc, array = descriptor(array)
        keep += [array, desc]
        arrays.append(array)
        args.append(ctypes.byref(desc))
    results = entry["results"]
    descs = call_with_results(getattr(library, entry["symbol"]), results, args)
    if not results:
        return []
    owned = owned_buffers(descs, arrays)
    if buffers is not None:
        buffers += owned
        return [view(d, r) for d, r in zip(descs, results)]
    values = [view(d, r).copy() for d, r in zip(descs, results)]
    release(library, owned)
    return values


def load(directory):
    """The manifest of `directory`, its device libraries by device id, its
    entry points by name and its stages by id."""
    try:
        manifest = ftpipe_manifest.load(directory)
    except ftpipe_manifest.ManifestError as error:
        raise SystemExit("error: %s" % error)
    libraries = {d["id"]: ctypes.CDLL(os.path.join(directory, d["artifact"]))
                 for d in manifest["devices"]}
    return (manifest, libraries, ftpipe_manifest.entries(manifest),
            ftpipe_manifest.stages(manifest))


def arguments(entry, weights, inputs, saved, microbatch=0, weight_saved=()):
    """The values of `entry`'s arguments in the manifest's order: parameters
    from `weights` by name, data inputs from `inputs` by name, the saved
    values of the stage's forward from `saved` and, for a weight part, its
    input part's results from `weight_saved`."""
    values = []
    for arg in entry["arguments"]:
        kind = arg["kind"]
        values.append(microbatch if kind == "microbatch" else
                      weights[arg["name"]] if kind == "param" else
                      inputs[arg["name"]] if kind == "input" else
                      weight_saved[arg["saved"]] if kind == "weight_saved" else
                      saved[arg["saved"]])
    return values


def add_gradients(out, entry, results):
    for r, v in zip(entry["results"], results):
        key = "grad." + r["name"]
        out[key] = out[key] + v if key in out else v


def main():
    parser = argparse.ArgumentParser(
        description="runs the artifacts of ftpipe-compile --target=cpu")
    parser.add_argument("dir")
    parser.add_argument("--weights", required=True)
    parser.add_argument("--inputs", required=True)
    parser.add_argument("-o", dest="output", required=True)
    parser.add_argument("--split-backward", action="store_true",
                        help="run split backwards as their input parts, "
                        "then all weight parts")
    opts = parser.parse_args()

    manifest, libraries, entries, stages = load(opts.dir)
    weights, inputs = load_file(opts.weights), load_file(opts.inputs)
    abi = libraries[0]  # the stage ABI comes with every artifact

    abi.ftpipe_rt_local_begin(ctypes.c_int64(len(libraries)))
    out, saved = {}, {}
    for stage in manifest["stage_order"]:
        entry = entries[stages[stage]["forward"]]
        abi.ftpipe_rt_local_select(ctypes.c_int64(entry["device"]))
        results = call(libraries[entry["device"]], entry,
                       arguments(entry, weights, inputs, []))
        saved[stage] = [v for r, v in zip(entry["results"], results)
                        if r["kind"] == "saved"]
        for i, (r, v) in enumerate(zip(entry["results"], results)):
            if r["kind"] == "loss":
                out["loss"] = v
            elif r["kind"] == "output":
                out["output%d" % i] = v
    weight_parts = []
    for stage in reversed(manifest["stage_order"]):
        if "backward" not in stages[stage]:
            continue
        split = opts.split_backward and "backward_input" in stages[stage]
        entry = entries[stages[stage]["backward_input" if split
                                      else "backward"]]
        abi.ftpipe_rt_local_select(ctypes.c_int64(entry["device"]))
        results = call(libraries[entry["device"]], entry,
                       arguments(entry, weights, inputs, saved[stage]))
        if split:
            weight_parts.append((stage, results))
        else:
            add_gradients(out, entry, results)
    for stage, carried in weight_parts:
        entry = entries[stages[stage]["backward_weight"]]
        abi.ftpipe_rt_local_select(ctypes.c_int64(entry["device"]))
        add_gradients(out, entry, call(libraries[entry["device"]], entry,
                                       arguments(entry, weights, inputs,
                                                 saved[stage],
                                                 weight_saved=carried)))
    abi.ftpipe_rt_local_end.restype = ctypes.c_int64
    pending = abi.ftpipe_rt_local_end()
    if pending:
        raise SystemExit("error: %d messages were sent and never received" %
                         pending)
    if "loss" in out and "output0" not in out:
        # hf_reference.py names the loss of a model's forward output0.
        out["output0"] = out["loss"]
    save_file({k: np.asarray(v) for k, v in out.items()}, opts.output)
    print("run_artifacts: %d devices, %d stages, %d tensors written" % (
        len(libraries), len(stages), len(out)) +
        (", %d split backwards" % len(weight_parts)
         if opts.split_backward else ""))


if __name__ == "__main__":
    main()
