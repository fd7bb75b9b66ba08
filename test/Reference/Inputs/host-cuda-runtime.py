#!/usr/bin/env python3
# host-cuda-runtime.py - runs scripts/gpu/train_cuda_artifacts.py (the GPU's
# training driver, docs/GPU.md) on CPU artifacts, with FTPipeCUDARuntime's
# driver API played by host memory: what the driver does (the schedule's
# order, micro-batch views of the data set, gradient sums scaled by 1/M,
# updates, the buffers it frees) can then be checked without a GPU.
#
#   host-cuda-runtime.py DRIVER DIR ARGS...
#
# runs DRIVER's main() on DIR (artifacts of ftpipe-compile --target=cpu) with
# ARGS. The stand-ins: ftpipe_cuda_alloc/free are numpy buffers (buffers of
# the generated code go back through its _mlir_memref_to_llvm_free), copies
# are memmove, ftpipe_cuda_accumulate_f32 is numpy's f32 arithmetic, and the
# optimizer is AdamW without weight decay as
# emulate-weight-versions.py writes it (torch.optim.AdamW's formula).

import ctypes
import importlib.util
import json
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
driver, directory = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(driver))
import run_cuda_artifacts  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "emulate", os.path.join(here, "emulate-weight-versions.py"))
emulate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(emulate)


def floats(address, count):
    return np.ctypeslib.as_array((ctypes.c_float * count).from_address(
        address))


class Function:
    """A stand-in that takes ctypes' restype and argtypes as a CDLL's
    functions do."""

    def __init__(self, body):
        self.body = body

    def __call__(self, *args):
        return self.body(*args)


class HostRuntime:
    """FTPipeCUDARuntime's functions that the drivers call, on the host."""

    def __init__(self):
        manifest = json.load(open(os.path.join(directory, "manifest.json")))
        self.artifact = ctypes.CDLL(os.path.join(
            directory, manifest["devices"][0]["artifact"]))
        self.buffers = {}
        self.adamw = None
        for name in dir(self):
            if name.startswith("cuda_"):
                setattr(self, "ftpipe_" + name, Function(getattr(self, name)))

    def cuda_available(self):
        return 1

    def cuda_alloc(self, size):
        buffer = np.zeros(max(int(size), 1), np.uint8)
        self.buffers[buffer.ctypes.data] = buffer
        return buffer.ctypes.data

    def cuda_free(self, pointer):
        if self.buffers.pop(pointer, None) is None:
            self.artifact._mlir_memref_to_llvm_free(ctypes.c_void_p(pointer))

    def cuda_copy_to_device(self, target, source, size):
        ctypes.memmove(target, source, size)

    cuda_copy_to_host = cuda_copy_to_device

    def cuda_nothing(self, *args):
        return 0

    cuda_synchronize = cuda_enable_transfers = cuda_reset_peak = cuda_nothing
    cuda_peak_bytes = cuda_stream = cuda_optimizer_destroy = cuda_nothing

    def cuda_accumulate_f32(self, total, value, count, scale, first):
        total = floats(total, count)
        total[:] = (np.float32(0) if first else total) + \
            np.float32(scale) * floats(value, count)

    def cuda_optimizer_create(self, kind, lr, warmup, weight_decay):
        if kind != b"adamw" or warmup or weight_decay:
            raise SystemExit("host-cuda-runtime: AdamW without warm-up and "
                             "weight decay only")
        self.adamw = {"lr": lr, "state": {}, "steps": 0}
        return 1

    def cuda_optimizer_step(self, optimizer, count, names, ranks, dims,
                            values, grads):
        self.adamw["steps"] += 1
        params, sums, first = {}, {}, 0
        for i in range(count):
            size = int(np.prod([dims[first + j] for j in range(ranks[i])]))
            first += ranks[i]
            name = names[i].decode()
            params[name] = floats(values[i], size)
            sums[name] = floats(grads[i], size).copy()
        updated = dict(params)
        emulate.adamw(updated, sums, self.adamw["state"],
                      self.adamw["steps"], self.adamw["lr"])
        for name, view in params.items():
            view[:] = updated[name]


class Manifests:
    """run_cuda_artifacts's json module, presenting a CPU artifact's manifest
    as one of device memory."""

    @staticmethod
    def load(stream):
        value = json.load(stream)
        if isinstance(value, dict) and "memory" in value:
            value["memory"] = "cuda-device"
        return value


def device_init(self):
    self.rt = HostRuntime()


run_cuda_artifacts.json = Manifests
run_cuda_artifacts.Device.__init__ = device_init
spec = importlib.util.spec_from_file_location("train_cuda_artifacts", driver)
train = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train)
sys.argv = [driver] + sys.argv[2:]
sys.exit(train.main())
