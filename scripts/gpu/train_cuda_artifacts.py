#!/usr/bin/env python3
# train_cuda_artifacts.py - training steps of the CUDA artifacts of
# ftpipe-compile --target=cuda on the GPU, in the order of a pipeline
# schedule, with the device optimizer (docs/GPU.md):
#
#   train_cuda_artifacts.py DIR --weights W --data D --schedule S.txt
#       --micro-batch-size B --lr X [--weight-decay X] [--optimizer adamw]
#       [--losses REF.log --rtol R] -o OUT
#
# S.txt is the schedule model's per-device action lists as ftpipe-run prints
# them (--print-schedule: "device 0: 0F0 0F1 0B0 0B1 U0 ..."; GPipe, 1F1B
# with flush or any synchronous schedule); its steps and micro-batches are
# the run's. W and D are train_reference.py init's weights and data set;
# micro-batch m reads samples (m*B + i) mod N, i < B, as train_reference.py
# train does. Weights and data cross to the device once (a micro-batch's
# inputs are views of the data set); each backward's gradients are added up
# on the device, scaled by 1/M (ftpipe_cuda_accumulate_f32), and each U
# applies the device optimizer to every parameter (ftpipe_cuda_optimizer_*,
# FTPipeCUDARuntime's DeviceOptimizer; its other hyper-parameters are
# PyTorch's defaults). The devices' lists run in turn on one thread over the
# stage ABI's in-process mailbox (run_cuda_artifacts.py's Program): an action
# runs once the forwards of the earlier stages (the manifest's stage order)
# or the backwards of the later ones for its micro-batch have run, and a
# step's update once every device has reached it. Prints each step's mean
# loss as train_reference.py does ("step K loss X"), compares the losses
# with REF.log's (exit status 1 beyond R relative), and writes the final
# weights to OUT (safetensors, Hugging Face names), which
# train_reference.py weights compares with PyTorch's.

import argparse
import ctypes
import json
import os
import re
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from run_cuda_artifacts import DTYPES, Program, dense_address  # noqa: E402
from memref_abi import memref_struct  # noqa: E402
from schedule_order import in_turn, parse_schedule  # noqa: E402

class Trainer:
    """A Program with its data set on the device, the step's gradient sums
    and the device optimizer."""

    def __init__(self, directory, weights, data, batch, optimizer, lr,
                 weight_decay):
        manifest_inputs = json.load(open(os.path.join(
            directory, "manifest.json")))["inputs"]
        data = {name: np.ascontiguousarray(
            value, dtype=DTYPES[manifest_inputs[name]["dtype"]])
            for name, value in data.items() if name in manifest_inputs}
        self.samples = {value.shape[0] for value in data.values()}
        if len(self.samples) != 1:
            raise SystemExit("error: the data inputs differ in their sample "
                             "counts: %s" % sorted(self.samples))
        self.samples = self.samples.pop()
        self.data = data
        self.batch = batch
        self.program = Program(directory, weights, data)
        rt = self.program.device.rt
        rt.ftpipe_cuda_optimizer_create.restype = ctypes.c_void_p
        rt.ftpipe_cuda_optimizer_create.argtypes = [
            ctypes.c_char_p, ctypes.c_double, ctypes.c_int64, ctypes.c_double]
        rt.ftpipe_cuda_optimizer_step.argtypes = [
            ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        rt.ftpipe_cuda_optimizer_destroy.argtypes = [ctypes.c_void_p]
        rt.ftpipe_cuda_accumulate_f32.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
            ctypes.c_int]
        self.rt = rt
        self.optimizer = rt.ftpipe_cuda_optimizer_create(
            optimizer.encode(), lr, 0, weight_decay)
        if not self.optimizer:
            raise SystemExit("error: no device optimizer '%s'" % optimizer)
        self.weights = {name: value.shape for name, value in weights.items()}
        self.sums = {}  # name -> device buffer of the step's gradient sum
        self.fresh = set()  # names whose sum this step has not started

    def inputs(self, microbatch):
        """Views of the data set's samples of `microbatch`, in device
        memory."""
        start = (microbatch * self.batch) % self.samples
        if start + self.batch > self.samples:
            raise SystemExit("error: micro-batch %d wraps around the %d "
                             "samples; choose a sample count that the "
                             "micro-batch size divides" % (microbatch,
                                                           self.samples))
        views = {}
        for name, value in self.data.items():
            whole = self.program.uploaded[name]
            row = value[0].nbytes
            desc = memref_struct(value.ndim)()
            desc.allocated = whole.allocated
            desc.aligned = whole.aligned + start * row
            desc.offset = 0
            desc.sizes[0] = self.batch
            desc.strides[0] = whole.strides[0]
            for i in range(1, value.ndim):
                desc.sizes[i] = whole.sizes[i]
                desc.strides[i] = whole.strides[i]
            views[name] = desc
        return views

    def accumulate(self, results, scale):
        """Adds one backward's gradients, times `scale`, to the step's sums."""
        for r, d in results:
            name = r["name"]
            if name not in self.sums:
                count = int(np.prod(self.weights[name]))
                self.sums[name] = (self.program.device.rt.ftpipe_cuda_alloc(
                    4 * max(count, 1)), count)
                self.fresh.add(name)
            if r["dtype"] != "f32":
                raise SystemExit("error: gradient %s is %s, not f32" % (
                    name, r["dtype"]))
            pointer, count = self.sums[name]
            self.rt.ftpipe_cuda_accumulate_f32(pointer, dense_address(d, r),
                                               count, scale,
                                               int(name in self.fresh))
            self.fresh.discard(name)

    def update(self):
        """The device optimizer's step over every parameter with a gradient
        sum; the sums start afresh."""
        names = sorted(self.sums)
        dims = [size for n in names for size in self.weights[n]]
        uploaded = self.program.uploaded
        self.rt.ftpipe_cuda_optimizer_step(
            self.optimizer, len(names),
            (ctypes.c_char_p * len(names))(*[n.encode() for n in names]),
            (ctypes.c_int64 * len(names))(*[len(self.weights[n])
                                            for n in names]),
            (ctypes.c_int64 * max(len(dims), 1))(*dims),
            (ctypes.c_void_p * len(names))(*[uploaded[n].aligned
                                             for n in names]),
            (ctypes.c_void_p * len(names))(*[self.sums[n][0] for n in names]))
        self.fresh = set(names)

    def run(self, order, microbatches):
        """Runs `order` (in_turn's); returns each step's mean loss."""
        program = self.program
        stages = program.stages
        pending = {}  # (stage, mb) -> (saved descriptors, owned buffers)
        losses, step_losses = [], []
        program.abi.ftpipe_rt_local_begin(
            ctypes.c_int64(len(program.libraries)))
        for kind, stage, mb in order:
            if kind == "U":
                self.update()
                losses.append(float(np.mean(step_losses)))
                print("step %d loss %.6f" % (stage, losses[-1]), flush=True)
                step_losses = []
                continue
            # Before the action: a failed CUDA call aborts the process.
            print("train_cuda_artifacts: %s of stage %d, micro-batch %d" % (
                "forward" if kind == "F" else "backward", stage, mb),
                file=sys.stderr, flush=True)
            if kind == "F":
                results, owned = program.run(stage, "forward",
                                             microbatch=mb,
                                             inputs=self.inputs(mb))
                for r, d in results:
                    if r["kind"] == "loss":
                        step_losses.append(float(
                            program.device.download(d, r)))
                saved = [d for r, d in results if r["kind"] == "saved"]
                if "backward" in stages[stage]:
                    pending[(stage, mb)] = (saved, owned)
                else:
                    self.free(owned)
            else:
                saved, owned = pending.pop((stage, mb))
                results, grads_owned = program.run(
                    stage, "backward", saved, microbatch=mb,
                    inputs=self.inputs(mb))
                self.accumulate(results, 1.0 / microbatches)
                self.free(owned + grads_owned)
            # A failed kernel of the action shows here (FTPipeCUDARuntime
            # aborts with CUDA's message), not at a later action.
            self.rt.ftpipe_cuda_synchronize()
        left = program.abi.ftpipe_rt_local_end()
        if left:
            raise SystemExit("error: %d messages were sent and never "
                             "received" % left)
        if pending:
            raise SystemExit("error: forwards without their backward: %s" %
                             sorted(pending))
        return losses

    def free(self, pointers):
        for pointer in dict.fromkeys(pointers):
            self.program.device.free(pointer)

    def final_weights(self):
        return {name: self.program.device.download(
            desc, {"shape": list(self.weights[name]), "dtype": "f32"})
            for name, desc in self.program.uploaded.items()
            if name in self.weights}


def reference_losses(path):
    """Each step's loss as train_reference.py train printed it."""
    return [float(m.group(1)) for m in
            re.finditer(r"^step \d+ loss (\S+)$", open(path).read(), re.M)]


def main():
    parser = argparse.ArgumentParser(
        description="training steps of CUDA artifacts in a schedule's order")
    parser.add_argument("dir")
    parser.add_argument("--weights", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--schedule", required=True)
    parser.add_argument("--micro-batch-size", type=int, required=True)
    parser.add_argument("--optimizer", default="adamw")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--losses", help="train_reference.py train's output")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("-o", dest="output", required=True)
    opts = parser.parse_args()

    lists = parse_schedule(open(opts.schedule).read())
    trainer = Trainer(opts.dir, load_file(opts.weights), load_file(opts.data),
                      opts.micro_batch_size, opts.optimizer, opts.lr,
                      opts.weight_decay)
    program = trainer.program
    order = in_turn(lists, program.manifest["stage_order"],
                    {s for s in program.stages
                     if "backward" in program.stages[s]})
    microbatches = {a[2] for a in order if a[0] == "F"}
    updates = sum(a[0] == "U" for a in order)
    if not updates or len(microbatches) % updates:
        raise SystemExit("error: %d micro-batches over %d updates" % (
            len(microbatches), updates))
    program.device.rt.ftpipe_cuda_reset_peak()
    losses = trainer.run(order, len(microbatches) // updates)
    save_file(trainer.final_weights(), opts.output)
    print("train_cuda_artifacts: %d steps of %d micro-batches, %d devices; "
          "peak device memory %d bytes" % (
              updates, len(microbatches) // updates, len(lists),
              program.device.rt.ftpipe_cuda_peak_bytes()))
    if opts.losses:
        expected = reference_losses(opts.losses)
        if len(expected) != len(losses):
            print("train_cuda_artifacts: %d losses, the reference has %d: "
                  "FAIL" % (len(losses), len(expected)))
            return 1
        worst = max(abs(a - e) / abs(e) for a, e in zip(losses, expected))
        ok = worst <= opts.rtol
        print("train_cuda_artifacts: losses vs the reference: max rel. error "
              "%.3e, tolerance %g: %s" % (worst, opts.rtol,
                                          "ok" if ok else "FAIL"))
        if not ok:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
