#!/usr/bin/env python3
# compiled_bert_layer.py - time of ftpipe-compile's CPU code for one BERT-large
# encoder layer, against its contractions on OpenBLAS and PyTorch eager.
#
#   compiled_bert_layer.py DIR MODEL.mlir CONFIG.json [--repeats N]
#                          [--title TEXT]
#
# DIR holds ftpipe-compile's artifacts of MODEL.mlir for one device
# (bench/compiled_bert_layer.sh makes them: BERT-large's config with one
# encoder layer, FTPipe's shapes 4 x 384 tokens, with the embeddings, QA head
# and loss around it). Runs forward + backward of one micro-batch N times with
# the same random weights and inputs and prints, measured in this run:
#   - the compiled code's median time;
#   - (a) the time of the same contractions in OpenBLAS alone (the gemm calls
#     that the code makes, timed inside the BLAS entry), and the ratio;
#   - (b) PyTorch eager (the Hugging Face model of the same config, the same
#     weights, loss.backward()), its median time and the ratio;
#   - both losses, so that the two computed the same thing.
# Times are the process's CPU time (the ratios too), which a loaded machine
# inflates far less than wall time; the wall times are printed beside them,
# and so are the compiled code's system CPU time (page faults of fresh
# buffers) and the buffers it took fresh from the system per step.
# bench/compiled_gpt2_block.sh runs it on one GPT-2 124M block (--title).
# Run it with the reference environment's python, niced, with the same thread
# count for OpenBLAS and PyTorch (the .sh wrapper sets one thread).

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "ftpipe-compile"))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "ftpipe-reference"))
import hf_reference  # noqa: E402
import run_artifacts  # noqa: E402


def compiled_step(opts, weights, inputs):
    """Returns a function running forward + backward once, and the loss."""
    _, libraries, entries, stages = run_artifacts.load(opts.dir)
    (library,) = libraries.values()
    (stage,) = stages.values()
    forward, backward = entries[stage["forward"]], entries[stage["backward"]]

    def values(entry, saved):
        return run_artifacts.arguments(entry, weights, inputs, saved)

    library.ftpipe_rt_local_begin(ctypes.c_int64(1))
    library.ftpipe_rt_local_select(ctypes.c_int64(0))

    def step():
        # Results stay in the buffers the code allocated (no copies) until
        # backward has run.
        buffers = []
        results = run_artifacts.call(library, forward, values(forward, []),
                                     buffers)
        loss = float([v for r, v in zip(forward["results"], results)
                      if r["kind"] == "loss"][0])
        saved = [v for r, v in zip(forward["results"], results)
                 if r["kind"] == "saved"]
        run_artifacts.call(library, backward, values(backward, saved),
                           buffers)
        run_artifacts.release(library, buffers)
        return loss
    return step, library


def reference_data(model, config):
    """The weights and inputs hf_reference.py makes for MODEL.mlir's CONFIG
    (PyTorch's initialisation, one micro-batch)."""
    import tempfile
    from safetensors.numpy import load_file

    with tempfile.TemporaryDirectory() as work:
        w, i, o = (os.path.join(work, n) for n in ("w", "i", "o"))
        sys.argv = ["hf_reference.py", "reference", model, config,
                    "--weights", w, "--inputs", i, "--outputs", o]
        hf_reference.main()
        return load_file(w), load_file(i)


def timed(function):
    """The process's CPU time and the wall time of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    function()
    return time.process_time() - cpu, time.perf_counter() - wall


def system_seconds():
    """The process's system CPU time so far."""
    return os.times().system


def fresh_blocks(library):
    """Buffers the generated code has taken from the system so far."""
    reused, fresh, cached = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    library.ftpipe_host_alloc_stats(ctypes.byref(reused), ctypes.byref(fresh),
                                    ctypes.byref(cached))
    return fresh.value


def blas_seconds(library):
    calls, seconds = ctypes.c_int64(), ctypes.c_double()
    library.ftpipe_blas_stats(ctypes.byref(calls), ctypes.byref(seconds),
                              ctypes.c_int64(1))
    return calls.value, seconds.value


def main():
    parser = argparse.ArgumentParser(
        description="compiled BERT-large layer vs OpenBLAS and PyTorch")
    parser.add_argument("dir")
    parser.add_argument("model")
    parser.add_argument("config")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--title", default="BERT-large, 1 encoder layer (+ "
                        "embeddings, QA head, loss), 4 x 384 tokens")
    opts = parser.parse_args()

    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    weights, inputs = reference_data(opts.model, opts.config)

    step, library = compiled_step(opts, weights, inputs)
    loss = step()  # warm-up (page faults, OpenBLAS buffers, the buffer cache)
    blas_seconds(library)
    ours, blas = [], []
    system, fresh = system_seconds(), fresh_blocks(library)
    for _ in range(opts.repeats):
        ours.append(timed(step))
        blas.append(blas_seconds(library))
    system = (system_seconds() - system) / opts.repeats
    fresh = (fresh_blocks(library) - fresh) / opts.repeats
    calls = blas[0][0]
    in_blas = statistics.median(s for _, s in blas)

    model = hf_reference.hf_model(json.load(open(opts.config)))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()},
                          strict=False)
    model.train(False)  # dropout off, as in our IR
    args = {k: torch.from_numpy(v.astype(np.int64)) for k, v in inputs.items()}

    def torch_step():
        model.zero_grad(set_to_none=True)
        out = model(**args)
        out.loss.backward()
        return float(out.loss.detach())
    torch_loss = torch_step()
    theirs = [timed(torch_step) for _ in range(opts.repeats)]

    cpu = statistics.median(c for c, _ in ours)
    wall = statistics.median(w for _, w in ours)
    torch_cpu = statistics.median(c for c, _ in theirs)
    torch_wall = statistics.median(w for _, w in theirs)
    print("%s, f32, forward + backward, %d threads, median of %d;"
          " CPU time of the process (wall time in brackets), load average "
          "before: %s" % (opts.title, torch.get_num_threads(), opts.repeats,
                          " ".join(open("/proc/loadavg").read().split()[:3])))
    print("  compiled (ftpipe-compile, cpu):     %8.1f ms (%8.1f)   loss %.6f"
          % (cpu * 1e3, wall * 1e3, loss))
    print("      of it system (mean):            %8.1f ms             "
          "%.1f fresh buffers a step" % (system * 1e3, fresh))
    print("  (a) its %d gemm calls in OpenBLAS:  %8.1f ms             "
          "ratio %.2f" % (calls, in_blas * 1e3, cpu / in_blas))
    print("  (b) PyTorch %s eager:      %8.1f ms (%8.1f)   ratio %.2f   "
          "loss %.6f" % (torch.__version__, torch_cpu * 1e3, torch_wall * 1e3,
                         cpu / torch_cpu, torch_loss))

if __name__ == "__main__":
    main()
