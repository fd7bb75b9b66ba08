#!/usr/bin/env python3
# train_reference.py - the training runs that ftpipe-run must reproduce, done
# by PyTorch and Hugging Face transformers (the reference environment).
#
#   init MODEL.mlir CONFIG.json --seed S --samples N --weights W --data D
#       builds the HF model of CONFIG.json with transformers' own seeded
#       initialisation, writes its parameters (HF names, f32) to W, and a data
#       set of N samples shaped like MODEL.mlir's data inputs (a leading sample
#       dimension instead of the micro-batch's) to D.
#   train CONFIG.json --weights W --data D --steps K --micro-batches M
#         --micro-batch-size B [--optimizer adamw|sgd] [--lr X]
#         [--weight-decay X] [--freeze REGEX [--freeze-at K0]] -o OUT
#       K optimizer steps; step k accumulates the gradients of micro-batches
#       k*M .. k*M+M-1, each the mean loss of its samples, scaled by 1/M;
#       micro-batch m reads samples (m*B + i) mod N, i < B. No dropout. Writes
#       the final parameters to OUT and prints each step's mean loss. The
#       parameters whose name REGEX matches (re.search) get
#       requires_grad = False from step K0 (default 0) on: no gradient, no
#       update, AdamW's state left as it was.
#   load-hf CONFIG.json WEIGHTS --data D --micro-batch-size B
#       what a user does with ftpipe-run --save's file: puts it beside the
#       config in a directory, loads it with transformers' from_pretrained
#       (refusing missing or unexpected tensors), and prints the loss of the
#       first micro-batch of D. A WEIGHTS directory (--save DIR) is loaded
#       as it is.
# CONFIG.json may be a checkpoint directory (its config.json), and weights
# (W, OURS, REF) checkpoint directories, sharded or not, in any float dtype.
#   weights OURS REF --initial W --rtol R --bound B [--zero-gradient SPEC]...
#       every tensor of REF equals OURS within R relative to the tensor's
#       largest value in REF, except the elements that a SPEC names
#       (`REGEX` for whole tensors, `REGEX:START:STOP` for the flattened
#       elements START..STOP-1): their gradient is zero in exact arithmetic,
#       so in f32 both sides hold rounding noise that AdamW scales up to
#       steps of size lr in random directions; there both sides must have
#       moved at most B from W (the test derives B from lr and the steps).
#       With --frozen REGEX, the tensors whose name it matches must equal W
#       bit for bit in OURS (and at least one must).
#
# The runtime's side of the contract: docs/Runtime.md, "Training compiled
# models".

import argparse
import json
import os
import re
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import hf_model, make_inputs, parse_signature  # noqa: E402


def read_weights(path):
    """name -> f32 numpy array, from a safetensors file or a Hugging Face
    checkpoint directory (sharded or not, any float dtype)."""
    from safetensors.torch import load_file as load_torch
    if not os.path.isdir(path):
        files = [path]
    elif os.path.exists(os.path.join(path, "model.safetensors.index.json")):
        index = json.load(open(os.path.join(
            path, "model.safetensors.index.json")))
        files = [os.path.join(path, f)
                 for f in sorted(set(index["weight_map"].values()))]
    else:
        files = [os.path.join(path, "model.safetensors")]
    weights = {}
    for f in files:
        for name, tensor in load_torch(f).items():
            weights[name] = (tensor.float() if tensor.is_floating_point()
                             else tensor).numpy()
    return weights


def read_config(path):
    """A config.json, or a checkpoint directory's."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    return json.load(open(path))


def cmd_init(opts):
    import torch
    _, _, _, args, _ = parse_signature(opts.model)
    config_json = json.load(open(opts.config))
    torch.manual_seed(opts.seed)
    model = hf_model(config_json).float()
    weights = {name: p.detach().contiguous().numpy()
               for name, p in model.named_parameters()}
    save_file(weights, opts.weights, metadata={"seed": str(opts.seed)})
    sample_args = [dict(a, shape=[opts.samples] + a["shape"][1:])
                   for a in args]
    data = make_inputs(sample_args, config_json["vocab_size"], opts.seed)
    save_file(data, opts.data)
    print("init: %d parameters, %d data inputs of %d samples" % (
        len(weights), len(data), opts.samples))


def cmd_train(opts):
    import torch
    config_json = read_config(opts.config)
    model = hf_model(config_json).float()
    weights = read_weights(opts.weights)
    state = {name: torch.from_numpy(weights[name].copy())
             for name, _ in model.named_parameters()}
    missing = model.load_state_dict(state, strict=False).missing_keys
    named = dict(model.named_parameters())
    if any(k in named for k in missing):
        raise SystemExit("error: %s lacks %s" % (opts.weights, missing))
    model.eval()  # no dropout; gradients still flow
    params = list(model.parameters())
    frozen = [p for name, p in model.named_parameters()
              if opts.freeze and re.search(opts.freeze, name)]
    if opts.freeze and not frozen:
        raise SystemExit("error: --freeze %r matches no parameter" % opts.freeze)
    if opts.optimizer == "adamw":
        optimizer = torch.optim.AdamW(params, lr=opts.lr,
                                      weight_decay=opts.weight_decay)
    else:
        optimizer = torch.optim.SGD(params, lr=opts.lr, momentum=0.9,
                                    weight_decay=opts.weight_decay)
    data = {k: torch.from_numpy(v.astype(np.int64))
            for k, v in load_file(opts.data).items()}
    samples = next(iter(data.values())).shape[0]
    b, m_count = opts.micro_batch_size, opts.micro_batches
    for step in range(opts.steps):
        if step == opts.freeze_at:
            for p in frozen:
                p.requires_grad_(False)
        optimizer.zero_grad()
        losses = []
        for m in range(step * m_count, (step + 1) * m_count):
            index = torch.tensor([(m * b + i) % samples for i in range(b)])
            batch = {k: v[index] for k, v in data.items()}
            loss = model(**batch).loss
            (loss / m_count).backward()
            losses.append(float(loss.detach()))
        optimizer.step()
        print("step %d loss %.6f" % (step, sum(losses) / len(losses)))
    save_file({name: p.detach().contiguous().numpy()
               for name, p in model.named_parameters()}, opts.output,
              metadata={"format": "pt"})


def cmd_load_hf(opts):
    import shutil
    import tempfile
    import torch
    import transformers
    config_json = read_config(opts.config)
    cls = type(hf_model(config_json, device="meta"))
    if os.path.isdir(opts.weights):
        # A checkpoint directory (ftpipe-run --save DIR): loaded as it is.
        model, info = cls.from_pretrained(opts.weights,
                                          output_loading_info=True)
    else:
        with tempfile.TemporaryDirectory() as directory:
            json.dump({k: v for k, v in config_json.items() if k != "ftpipe"},
                      open(os.path.join(directory, "config.json"), "w"))
            shutil.copy(opts.weights,
                        os.path.join(directory, "model.safetensors"))
            model, info = cls.from_pretrained(directory,
                                              output_loading_info=True)
    problems = {k: v for k, v in info.items() if v}
    if problems:
        raise SystemExit("error: transformers loads %s with %s" % (
            opts.weights, problems))
    data = load_file(opts.data)
    batch = {k: torch.from_numpy(v[:opts.micro_batch_size].astype(np.int64))
             for k, v in data.items()}
    with torch.no_grad():
        loss = float(model.eval()(**batch).loss)
    print("load-hf: %s loads %s (transformers %s); loss of the first "
          "micro-batch %.6f" % (cls.__name__,
                                os.path.basename(opts.weights.rstrip("/")),
                                transformers.__version__, loss))


def zero_gradient_mask(name, size, specs):
    """The flattened elements of `name` that the --zero-gradient specs name."""
    import re
    mask = np.zeros(size, dtype=bool)
    for spec in specs:
        parts = spec.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            if re.search(parts[0], name):
                mask[int(parts[1]):int(parts[2])] = True
        elif re.search(spec, name):
            mask[:] = True
    return mask


def cmd_weights(opts):
    ours, ref = read_weights(opts.ours), read_weights(opts.reference)
    initial = read_weights(opts.initial)
    failures = 0
    for name in sorted(ref):
        b = ref[name].astype(np.float64).ravel()
        if name not in ours or ours[name].shape != ref[name].shape:
            print("%s: missing or shaped differently" % name)
            failures += 1
            continue
        a = ours[name].astype(np.float64).ravel()
        zero = zero_gradient_mask(name, b.size, opts.zero_gradient)
        verdicts = []
        if (~zero).any():
            scale = float(np.max(np.abs(b[~zero]))) or 1.0
            error = float(np.max(np.abs(a - b)[~zero])) / scale
            verdicts.append((error <= opts.rtol, "max rel. error %.3g "
                             "(tolerance %g)" % (error, opts.rtol)))
        if zero.any():
            w = initial[name].astype(np.float64).ravel()
            moved = max(float(np.max(np.abs(a - w)[zero])),
                        float(np.max(np.abs(b - w)[zero])))
            verdicts.append((moved <= opts.bound, "%d elements of zero "
                             "gradient moved at most %.3g (bound %g)" % (
                                 zero.sum(), moved, opts.bound)))
        ok = all(v for v, _ in verdicts)
        print("%s: %s %s" % (name, ", ".join(t for _, t in verdicts),
                             "ok" if ok else "MISMATCH"))
        failures += not ok
    if opts.frozen:
        names = [n for n in sorted(ours) if re.search(opts.frozen, n)]
        if not names:
            print("--frozen %r matches no tensor" % opts.frozen)
            failures += 1
        for name in names:
            same = (ours[name].dtype == initial[name].dtype and
                    ours[name].tobytes() == initial[name].tobytes())
            if not same:
                print("%s: frozen but changed MISMATCH" % name)
                failures += 1
        print("frozen: %d tensors bit-identical to the initial ones" %
              sum(1 for n in names if ours[n].tobytes() ==
                  initial[n].tobytes()))
    extra = sorted(set(ours) - set(ref))
    if extra:
        print("not in the reference: %s" % ", ".join(extra))
        failures += len(extra)
    print("weights: %d tensors, %d mismatches" % (len(ref), failures))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("init")
    p.add_argument("model")
    p.add_argument("config")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--weights", required=True)
    p.add_argument("--data", required=True)
    p = sub.add_parser("train")
    p.add_argument("config")
    p.add_argument("--weights", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--micro-batches", type=int, default=4)
    p.add_argument("--micro-batch-size", type=int, required=True)
    p.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--freeze", default="")
    p.add_argument("--freeze-at", type=int, default=0)
    p.add_argument("-o", dest="output", required=True)
    p = sub.add_parser("load-hf")
    p.add_argument("config")
    p.add_argument("weights")
    p.add_argument("--data", required=True)
    p.add_argument("--micro-batch-size", type=int, required=True)
    p = sub.add_parser("weights")
    p.add_argument("ours")
    p.add_argument("reference")
    p.add_argument("--initial", required=True)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--bound", type=float, default=0.0)
    p.add_argument("--zero-gradient", action="append", default=[])
    p.add_argument("--frozen", default="")
    opts = parser.parse_args()
    sys.exit({"init": cmd_init, "train": cmd_train, "load-hf": cmd_load_hf,
              "weights": cmd_weights}[opts.command](opts))


if __name__ == "__main__":
    main()
