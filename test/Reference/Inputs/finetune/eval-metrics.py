#!/usr/bin/env python3
# eval-metrics.py MODEL_DIR EVAL.safetensors RUN.log --micro-batch-size B
#
# The held-out loss and task metric of ftpipe-run's last evaluation (in
# RUN.log, after the last update: the weights that --save wrote to
# MODEL_DIR, in f32) against PyTorch and transformers on the same weights and
# the same whole micro-batches: the mean of the micro-batches' losses (1e-5
# relative); token accuracy's counts, exactly (causal LM: the argmax at token
# t against the label at t + 1; seq2seq: at each decoder token; labels -100
# not counted); exact match and F1 of the argmax start/end span against the
# gold positions, on token positions (docs/FineTuneCheckpoint.md), to 1e-6.
import argparse
import json
import os
import re
import sys

import numpy as np
import torch
import transformers
from safetensors.numpy import load_file


def span_f1(ps, pe, gs, ge):
    shared = min(pe, ge) - max(ps, gs) + 1
    if pe < ps or ge < gs or shared <= 0:
        return 0.0
    precision, recall = shared / (pe - ps + 1), shared / (ge - gs + 1)
    return 2 * precision * recall / (precision + recall)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("data")
    parser.add_argument("log")
    parser.add_argument("--micro-batch-size", type=int, required=True)
    opts = parser.parse_args()

    config = json.load(open(os.path.join(opts.model, "config.json")))
    cls = getattr(transformers, config["architectures"][0])
    model = cls.from_pretrained(opts.model).eval()
    data = {k: torch.from_numpy(v.astype(np.int64))
            for k, v in load_file(opts.data).items()}
    b = opts.micro_batch_size
    samples = next(iter(data.values())).shape[0]
    losses, correct, counted = [], 0, 0
    exact, f1, answers = 0.0, 0.0, 0
    with torch.no_grad():
        for j in range(max(1, samples // b)):
            batch = {k: v[j * b:(j + 1) * b] for k, v in data.items()}
            out = model(**batch)
            losses.append(float(out.loss))
            if "start_positions" in batch:
                seq_len = batch["input_ids"].shape[1]
                starts = out.start_logits.argmax(-1).tolist()
                ends = out.end_logits.argmax(-1).tolist()
                for ps, pe, gs, ge in zip(starts, ends,
                                          batch["start_positions"].tolist(),
                                          batch["end_positions"].tolist()):
                    if not (0 <= gs < seq_len and 0 <= ge < seq_len):
                        continue
                    answers += 1
                    exact += float(ps == gs and pe == ge)
                    f1 += span_f1(ps, pe, gs, ge)
            else:
                logits, labels = out.logits, batch["labels"]
                if "decoder_input_ids" not in batch:  # causal: shifted
                    logits, labels = logits[:, :-1], labels[:, 1:]
                predicted = logits.argmax(-1)
                counted += int((labels != -100).sum())
                correct += int((predicted == labels).sum())

    lines = [l for l in open(opts.log) if l.startswith("eval step ")]
    if not lines:
        sys.exit("error: %s has no evaluation" % opts.log)
    last = lines[-1]
    ours_loss = float(last.split()[4])
    ref_loss = sum(losses) / len(losses)
    failures = []
    if abs(ours_loss - ref_loss) > 1e-5 * max(1.0, abs(ref_loss)):
        failures.append("loss %.6f, PyTorch %.6f" % (ours_loss, ref_loss))
    if answers:
        m = re.search(r"exact match ([0-9.]+) f1 ([0-9.]+) \((\d+) answers\)",
                      last)
        if not m:
            sys.exit("error: no exact match and F1 in: " + last)
        ours = (float(m.group(1)), float(m.group(2)), int(m.group(3)))
        ref = (exact / answers, f1 / answers, answers)
        if ours[2] != ref[2] or abs(ours[0] - ref[0]) > 1e-6 or \
                abs(ours[1] - ref[1]) > 1e-6:
            failures.append("EM %.6f F1 %.6f over %d, PyTorch EM %.6f F1 %.6f "
                            "over %d" % (ours + ref))
        summary = "exact match %.6f f1 %.6f over %d answers" % ref
    else:
        m = re.search(r"token accuracy ([0-9.]+) \((\d+)/(\d+)\)", last)
        if not m:
            sys.exit("error: no token accuracy in: " + last)
        ours = (int(m.group(2)), int(m.group(3)))
        if ours != (correct, counted):
            failures.append("token accuracy %d/%d, PyTorch %d/%d" % (
                ours + (correct, counted)))
        summary = "token accuracy %d/%d" % (correct, counted)
    if failures:
        sys.exit("error: " + "; ".join(failures))
    print("eval-metrics: %s %s and loss %.6f equal PyTorch's (%d micro-batches)"
          % (cls.__name__, summary, ref_loss, len(losses)))


if __name__ == "__main__":
    main()
