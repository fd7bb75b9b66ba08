#!/usr/bin/env python3
# bert_large_layer.py - the BERT-large encoder layer of the GPU bundle
# (models/bert-large-layer: hidden 1024, 16 heads, FFN 4096, 4 x 384 tokens,
# QA head and loss) run forward + backward by FTPipe's CUDA artifact and by
# PyTorch eager on the same GPU, same weights (PyTorch's seeded N(0, 0.02)
# initialisation, handed to both), same inputs, f32, TF32 off on both sides;
# each warmed up, then the median of repeated steps timed with CUDA events.
# Also: the largest relative difference of loss and gradients between the two
# (f32 on one GPU: summation orders differ), the floor that the layer's FLOPs
# and bytes give at the GPU's peak rates, and the peak device memory of each.
#
#   bert_large_layer.py BUNDLE --json OUT.json [--warmup 3 --repeat 20]
#                       [--profile N]
#
# Runs on the lent GPU machine (PyTorch with CUDA, transformers); the CUDA
# runtime libraries must be on LD_LIBRARY_PATH (gpu-check.sh).

import argparse
import json
import os
import statistics
import sys

import numpy as np
from safetensors.numpy import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_cuda_artifacts import Program, compare, timed_steps  # noqa: E402

# Dense f32 (no tensor cores) and memory bandwidth, from NVIDIA's data sheets
# (SXM parts), by a substring of the device name.
PEAKS = {"H200": (67e12, 4.8e12), "H100": (67e12, 3.35e12),
         "A100": (19.5e12, 2.0e12)}


def layer_cost(config, batch, seq):
    """FLOPs and bytes of one forward + backward of the encoder layer (the
    embeddings and the 2-wide QA head are negligible): 2 FLOPs per
    multiply-add, the backward twice the forward; bytes: weights read three
    times and gradients written once, activations saved and read back."""
    h, f, heads = (config["hidden_size"], config["intermediate_size"],
                   config["num_attention_heads"])
    tokens = batch * seq
    linear = 2 * tokens * (4 * h * h + 2 * h * f)
    attention = 2 * 2 * batch * seq * seq * h
    flops = 3 * (linear + attention)
    weights = 4 * (4 * h * h + 2 * h * f)
    activations = 4 * (tokens * (10 * h + 2 * f) + 2 * batch * heads * seq * seq)
    return flops, 4 * weights + 2 * activations


def profile(program, top):
    """Device time of one forward + backward of `program` by kernel (and
    copy) name, from PyTorch's profiler (CUPTI sees every launch of the
    process, on any stream): the `top` longest in all, and the sum."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile
    rt = program.device.rt
    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        program.step(keep=False)
        rt.ftpipe_cuda_synchronize()
    rows = []
    for event in prof.key_averages():
        total = getattr(event, "device_time_total", None)
        if total is None:
            total = getattr(event, "cuda_time_total", 0)
        if total:
            rows.append({"name": event.key, "count": event.count,
                         "total_us": float(total)})
    rows.sort(key=lambda r: -r["total_us"])
    return {"device_us": sum(r["total_us"] for r in rows),
            "launches": sum(r["count"] for r in rows), "top": rows[:top]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle")
    parser.add_argument("--json", required=True)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also profile one of our steps (PyTorch's "
                        "profiler, CUDA activities) and keep the N kernels "
                        "and copies that took longest in all")
    opts = parser.parse_args()

    import torch
    import transformers
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    directory = os.path.join(opts.bundle, "models", "bert-large-layer")
    config = json.load(open(os.path.join(directory, "config.json")))
    torch.manual_seed(11)
    model = transformers.BertForQuestionAnswering(
        transformers.BertConfig(**config)).cuda().float().eval()
    weights = {n: p.detach().cpu().numpy()
               for n, p in model.named_parameters()}
    inputs = load_file(os.path.join(directory, "inputs.safetensors"))
    batch, seq = inputs["input_ids"].shape
    tensors = {k: torch.from_numpy(v.astype(np.int64)).cuda()
               for k, v in inputs.items()}

    # Ours: loss and gradients of one step, then timed steps; FTPipe's setup
    # (every forward recomputed before its backward) and, where the bundle
    # has it, the layer compiled with every activation kept (keep/), as
    # PyTorch eager runs it.
    def run_ours(path):
        program = Program(path, weights, inputs)
        rt = program.device.rt
        result = program.step(keep=True)
        rt.ftpipe_cuda_synchronize()
        rt.ftpipe_cuda_reset_peak()
        times, clock = timed_steps(program, opts.warmup, opts.repeat)
        programs[path] = program
        return result, times, clock, rt.ftpipe_cuda_peak_bytes()

    programs = {}

    ours, times, clock, ours_peak = run_ours(directory)
    kept = None
    if os.path.exists(os.path.join(directory, "keep", "manifest.json")):
        kept = run_ours(os.path.join(directory, "keep"))

    # PyTorch eager on the default stream.
    def torch_step():
        model.zero_grad(set_to_none=True)
        loss = model(**tensors).loss
        loss.backward()
        return loss

    loss = torch_step()
    theirs = {"loss": loss.detach().cpu().numpy()}
    for name, p in model.named_parameters():
        theirs["grad." + name] = p.grad.detach().cpu().numpy()
    for _ in range(opts.warmup):
        torch_step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    torch_times = []
    for _ in range(opts.repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch_step()
        end.record()
        end.synchronize()
        torch_times.append(start.elapsed_time(end))
    torch_peak = torch.cuda.max_memory_allocated()

    # Loss and gradients against PyTorch's with run_cuda_artifacts.compare's
    # rule: gradients under 10 % of the largest are held against that 10 %
    # (the key bias and the QA head's bias are mathematically zero here, and
    # both sides hold rounding noise of ~1e-9 in them).
    def differences(mine_all):
        loss = compare(mine_all, {"loss": theirs["loss"]}, 0, 0.1)[0]
        grads = {k: v for k, v in theirs.items() if k != "loss"}
        worst, where, _ = compare(mine_all, grads, 0, 0.1)
        return loss, worst, where

    worst = differences(ours)
    flops, bytes_moved = layer_cost(config, batch, seq)
    name = torch.cuda.get_device_name()
    peak = next((v for k, v in PEAKS.items() if k in name), None)
    floor_ms = (max(flops / peak[0], bytes_moved / peak[1]) * 1e3
                if peak else None)
    report = {
        "gpu": name, "torch": torch.__version__, "tf32": False,
        "tokens": [int(batch), int(seq)],
        "ours_median_ms": statistics.median(times), "ours_times_ms": times,
        "ours_clock": clock, "ours_peak_bytes": int(ours_peak),
        "torch_median_ms": statistics.median(torch_times),
        "torch_times_ms": torch_times, "torch_peak_bytes": int(torch_peak),
        "flops": flops, "bytes": bytes_moved, "floor_ms": floor_ms,
        "max_rel_diff_loss": worst[0], "max_rel_diff_grads": worst[1],
        "max_rel_diff_grads_at": worst[2],
    }
    if kept:
        kept_worst = differences(kept[0])
        report.update({
            "keep_median_ms": statistics.median(kept[1]),
            "keep_times_ms": kept[1], "keep_peak_bytes": int(kept[3]),
            "keep_max_rel_diff_loss": kept_worst[0],
            "keep_max_rel_diff_grads": kept_worst[1],
            "keep_max_rel_diff_grads_at": kept_worst[2]})
    if opts.profile:
        profiled = os.path.join(directory, "keep") if kept else directory
        try:
            report["ours_profile"] = profile(programs[profiled], opts.profile)
            report["ours_profile"]["artifact"] = os.path.relpath(
                profiled, opts.bundle)
        except Exception as error:  # the figures above stand without it
            print("profile failed: %s" % error)
    json.dump(report, open(opts.json, "w"), indent=1)
    if "ours_profile" in report:
        prof = report["ours_profile"]
        print("profile of one step of %s: %.3f ms of device time in %d "
              "kernels and copies; longest in all:" % (
                  prof["artifact"], prof["device_us"] / 1e3, prof["launches"]))
        for row in prof["top"]:
            print("  %10.1f us %5d x  %s" % (row["total_us"], row["count"],
                                            row["name"][:100]))
    print("peaks: ours %d bytes%s, PyTorch %d bytes" % (
        ours_peak, ", kept %d" % report["keep_peak_bytes"] if kept else "",
        torch_peak))
    if kept:
        print("bert-large layer, every activation kept: ours %.3f ms; loss "
              "rel. diff %.2e, gradients %.2e" % (
                  report["keep_median_ms"], report["keep_max_rel_diff_loss"],
                  report["keep_max_rel_diff_grads"]))
    print("bert-large layer fwd+bwd: ours %.3f ms (kept: %s), PyTorch eager "
          "%.3f ms (medians of %d, %s), floor %s ms; loss rel. diff %.2e, "
          "gradients %.2e" % (report["ours_median_ms"],
                    "%.3f ms" % report["keep_median_ms"] if kept else "-",
                    report["torch_median_ms"], opts.repeat, clock,
                    "%.3f" % floor_ms if floor_ms else "unknown",
                    report["max_rel_diff_loss"], report["max_rel_diff_grads"]))


if __name__ == "__main__":
    main()
