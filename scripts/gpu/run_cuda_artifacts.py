#!/usr/bin/env python3
# run_cuda_artifacts.py - runs the artifacts of ftpipe-compile --target=cuda
# for one micro-batch on the GPU, from DIR/manifest.json alone: the CUDA
# twin of tools/ftpipe-compile/run_artifacts.py (which drives CPU artifacts
# over host memory), with every argument, result and saved value in device
# memory (lib/Runtime's FTPipeCUDARuntime: ftpipe_cuda_alloc, copies across,
# ftpipe_cuda_free; docs/GPU.md).
#
#   run_cuda_artifacts.py DIR --weights W --inputs I [-o OUT]
#                         [--expected E --rtol 1e-4 --floor 0.1]
#                         [--repeat N --warmup K --timing T.json]
#
# Weights and inputs cross to the device once; saved values stay there from
# the forward to the backward; only the loss, outputs and gradients come
# back. OUT (safetensors) holds `loss` (also `output0`) and `grad.<name>`, the
# format of run_artifacts.py and hf_reference.py. With --repeat, the forward
# and backward run K + N times and T.json gets the N times (CUDA events on the
# runtime's stream when PyTorch is importable, else the host clock after a
# synchronisation), their median, and the pool's peak bytes. With --expected,
# the loss and gradients are compared with E (compare() says how) and the exit
# status is 1 beyond the tolerance.
# The CUDA runtime libraries must be on LD_LIBRARY_PATH (scripts/gpu-check.sh
# sets it to the bundle's lib/). Needs only numpy and safetensors.
# Artifacts for several devices run on the one GPU, in turn, over the stage
# ABI's in-process mailbox (forwards in the manifest's stage order, backwards
# in reverse, as run_artifacts.py does); their transfers copy device buffers
# through host bytes (ftpipe_cuda_enable_transfers).

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import numpy as np
from safetensors.numpy import load_file, save_file

# memref_abi.py lies beside this script in the bundle, in
# tools/ftpipe-reference/ in the repository.
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "..", "tools", "ftpipe-reference")]
from memref_abi import call_with_results, memref_struct  # noqa: E402

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32,
          "i64": np.int64, "i1": np.bool_}
# What generated code returns for a constant (a global): not to be freed.
GLOBAL_BUFFER = 0xdeadbeef


class Device:
    """FTPipeCUDARuntime's driver API, and the buffers this driver owns."""

    def __init__(self):
        self.rt = ctypes.CDLL("libFTPipeCUDARuntime.so", mode=os.RTLD_GLOBAL)
        self.rt.ftpipe_cuda_alloc.restype = ctypes.c_void_p
        self.rt.ftpipe_cuda_alloc.argtypes = [ctypes.c_size_t]
        self.rt.ftpipe_cuda_free.argtypes = [ctypes.c_void_p]
        for name in ("ftpipe_cuda_copy_to_device", "ftpipe_cuda_copy_to_host"):
            getattr(self.rt, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                               ctypes.c_size_t]
        self.rt.ftpipe_cuda_stream.restype = ctypes.c_void_p
        self.rt.ftpipe_cuda_peak_bytes.restype = ctypes.c_uint64
        if not self.rt.ftpipe_cuda_available():
            raise SystemExit("error: no CUDA device")

    def upload(self, array):
        """A device copy of `array` and its descriptor."""
        array = np.ascontiguousarray(array)
        pointer = self.rt.ftpipe_cuda_alloc(max(array.nbytes, 1))
        self.rt.ftpipe_cuda_copy_to_device(pointer, array.ctypes.data,
                                           array.nbytes)
        desc = memref_struct(array.ndim)()
        desc.allocated = desc.aligned = pointer
        desc.offset = 0
        stride = 1
        for i in reversed(range(array.ndim)):
            desc.sizes[i] = array.shape[i]
            desc.strides[i] = stride
            stride *= array.shape[i]
        return desc

    def download(self, desc, result):
        shape, dtype = result["shape"], np.dtype(DTYPES[result["dtype"]])
        out = np.empty(shape, dtype=dtype)
        self.rt.ftpipe_cuda_copy_to_host(out.ctypes.data,
                                         dense_address(desc, result),
                                         out.nbytes)
        return out

    def free(self, pointer):
        self.rt.ftpipe_cuda_free(pointer)


def dense_address(desc, result):
    """The device address of the first element of a result descriptor, which
    must be dense (row-major)."""
    shape = result["shape"]
    stride = 1
    for i in reversed(range(len(shape))):
        if shape[i] != 1 and desc.strides[i] != stride:
            raise SystemExit("error: result %s has a non-dense layout" %
                             result.get("name", "?"))
        stride *= shape[i]
    return desc.aligned + desc.offset * np.dtype(DTYPES[result["dtype"]]
                                                 ).itemsize


def call(library, entry, descs):
    """Calls one entry point on argument descriptors (device memory); returns
    its result descriptors."""
    args = [ctypes.c_int64(d) if isinstance(d, int) else ctypes.byref(d)
            for d in descs]
    return call_with_results(getattr(library, entry["symbol"]),
                             entry["results"], args)


class Program:
    """The artifacts of DIR with their parameters and inputs on the device."""

    def __init__(self, directory, weights, inputs):
        self.manifest = json.load(open(os.path.join(directory,
                                                    "manifest.json")))
        if self.manifest.get("memory") != "cuda-device":
            raise SystemExit("error: %s holds no CUDA artifacts with device "
                             "memory" % directory)
        self.libraries = {
            d["id"]: ctypes.CDLL(os.path.join(directory, d["artifact"]))
            for d in self.manifest["devices"]}
        self.device = Device()
        self.device.rt.ftpipe_cuda_enable_transfers()
        # The stage ABI comes with every artifact.
        self.abi = self.libraries[self.manifest["devices"][0]["id"]]
        self.abi.ftpipe_rt_local_end.restype = ctypes.c_int64
        self.entries = {e["name"]: e for e in self.manifest["entry_points"]}
        self.stages = {s["id"]: s for s in self.manifest["stages"]}
        self.uploaded = {}
        for source in (weights, inputs):
            for name, value in source.items():
                self.uploaded[name] = self.device.upload(value)

    def arguments(self, entry, saved, microbatch=0, inputs=None):
        """`entry`'s argument descriptors: parameters (and, without
        `inputs`, data inputs) from the uploaded ones by name, data inputs
        from `inputs` by name, `saved` values, the micro-batch index."""
        descs = []
        for arg in entry["arguments"]:
            kind = arg["kind"]
            descs.append(microbatch if kind == "microbatch" else
                         saved[arg["saved"]] if kind == "saved" else
                         inputs[arg["name"]] if kind == "input" and inputs
                         else self.uploaded[arg["name"]])
        return descs

    def owned(self, descs):
        mine = {d.allocated for d in self.uploaded.values()}
        pointers = []
        for d in descs:
            p = d.allocated
            if p and p != GLOBAL_BUFFER and p not in mine and p not in pointers:
                pointers.append(p)
        return pointers

    def run(self, stage, part, saved=(), microbatch=0, inputs=None):
        """Runs `stage`'s entry point `part` ("forward" or "backward") on its
        device, for `microbatch` (data inputs from `inputs` when given);
        returns its (result, descriptor) pairs and the buffers it allocated
        (device memory, the caller's to free)."""
        entry = self.entries[self.stages[stage][part]]
        self.abi.ftpipe_rt_local_select(ctypes.c_int64(entry["device"]))
        descs = call(self.libraries[entry["device"]], entry,
                     self.arguments(entry, saved, microbatch, inputs))
        return list(zip(entry["results"], descs)), self.owned(descs)

    def step(self, keep):
        """One forward and backward; with `keep`, the loss, outputs and
        gradients come back to the host."""
        out, saved, owned = {}, {}, []
        self.abi.ftpipe_rt_local_begin(ctypes.c_int64(len(self.libraries)))
        for stage in self.manifest["stage_order"]:
            results, allocated = self.run(stage, "forward")
            owned += allocated
            saved[stage] = [d for r, d in results if r["kind"] == "saved"]
            for i, (r, d) in enumerate(results):
                if keep and r["kind"] == "loss":
                    out["loss"] = self.device.download(d, r)
                elif keep and r["kind"] == "output":
                    out["output%d" % i] = self.device.download(d, r)
        for stage in reversed(self.manifest["stage_order"]):
            if "backward" not in self.stages[stage]:
                continue
            results, allocated = self.run(stage, "backward", saved[stage])
            owned += allocated
            for r, d in results:
                if keep:
                    key = "grad." + r["name"]
                    value = self.device.download(d, r)
                    out[key] = out[key] + value if key in out else value
        pending = self.abi.ftpipe_rt_local_end()
        if pending:
            raise SystemExit("error: %d messages were sent and never "
                             "received" % pending)
        for pointer in dict.fromkeys(owned):
            self.device.free(pointer)
        if "loss" in out and "output0" not in out:
            out["output0"] = out["loss"]
        return out


def timed_steps(program, warmup, repeat):
    """Milliseconds of `repeat` forward+backward steps after `warmup`."""
    rt = program.device.rt
    for _ in range(warmup):
        program.step(keep=False)
    rt.ftpipe_cuda_synchronize()
    times = []
    try:
        import torch
        stream = torch.cuda.ExternalStream(rt.ftpipe_cuda_stream())
        for _ in range(repeat):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            program.step(keep=False)
            end.record(stream)
            end.synchronize()
            times.append(start.elapsed_time(end))
        clock = "cuda-events"
    except ImportError:
        for _ in range(repeat):
            begin = time.perf_counter()
            program.step(keep=False)
            rt.ftpipe_cuda_synchronize()
            times.append((time.perf_counter() - begin) * 1e3)
        clock = "host-clock"
    return times, clock


def compare(ours, expected, rtol, floor):
    """The largest relative error of `ours` against `expected` over every
    tensor of `expected` (and the name where it is): |a - e| over |e|'s
    largest element, for gradients at least `floor` times the largest of all
    gradients (some are mathematically zero, where both sides hold rounding
    noise: stage_programs.py compare's rule)."""
    grads = [np.abs(v).max() for k, v in expected.items()
             if k.startswith("grad.") and v.size]
    largest = max(grads) if grads else 0.0
    worst, where = 0.0, None
    for key, value in expected.items():
        if key not in ours:
            raise SystemExit("error: %s is missing from our results" % key)
        scale = np.abs(value).max() if value.size else 0.0
        if key.startswith("grad."):
            scale = max(scale, floor * largest)
        error = float(np.abs(np.asarray(ours[key], np.float64) - value).max()
                      / max(scale, 1e-30)) if value.size else 0.0
        if error >= worst:
            worst, where = error, key
    return worst, where, worst <= rtol


def main():
    parser = argparse.ArgumentParser(
        description="runs the artifacts of ftpipe-compile --target=cuda")
    parser.add_argument("dir")
    parser.add_argument("--weights", required=True)
    parser.add_argument("--inputs", required=True)
    parser.add_argument("-o", dest="output")
    parser.add_argument("--repeat", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--timing")
    parser.add_argument("--expected",
                        help="compare with these results (stage_programs.py "
                        "hf-grads format); exit 1 beyond --rtol")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--floor", type=float, default=0.1)
    opts = parser.parse_args()

    program = Program(opts.dir, load_file(opts.weights), load_file(opts.inputs))
    rt = program.device.rt
    rt.ftpipe_cuda_reset_peak()
    out = program.step(keep=True)
    if opts.output:
        save_file({k: np.asarray(v) for k, v in out.items()}, opts.output)
    print("run_cuda_artifacts: %d tensors, peak device memory %d bytes" % (
        len(out), rt.ftpipe_cuda_peak_bytes()))
    if opts.expected:
        worst, where, ok = compare(out, load_file(opts.expected), opts.rtol,
                                   opts.floor)
        print("run_cuda_artifacts: loss %.9g; loss and %d gradients: max rel. "
              "error %.3e (%s), tolerance %g: %s" % (
                  float(out["loss"]), sum(k.startswith("grad.") for k in out),
                  worst, where, opts.rtol, "ok" if ok else "FAIL"))
        if not ok:
            return 1
    if opts.repeat:
        times, clock = timed_steps(program, opts.warmup, opts.repeat)
        report = {"times_ms": times, "median_ms": statistics.median(times),
                  "clock": clock, "peak_bytes": rt.ftpipe_cuda_peak_bytes()}
        if opts.timing:
            json.dump(report, open(opts.timing, "w"), indent=1)
        print("run_cuda_artifacts: median %.3f ms over %d steps (%s)" % (
            report["median_ms"], len(times), clock))


if __name__ == "__main__":
    sys.exit(main())
