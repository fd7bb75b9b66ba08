#!/usr/bin/env python3
"""ftpipe-finetune: fine-tunes a Hugging Face checkpoint as a pipeline, in
one command.

  ftpipe-finetune CHECKPOINT_DIR --data TRAIN.safetensors --devices N
                  [--eval-data EVAL.safetensors] [--epochs E | --steps K]
                  [--hardware PRESET] [--method M] [--schedule S] ... -o OUT

Steps, each leaving its files in OUT/work for inspection:
  1. ftpipe-model-gen CHECKPOINT_DIR: the model IR from its config.json, with
     the sequence lengths of the data set, returning the loss and what the
     task's metric needs (--metrics) (work/model.mlir);
  2. ftpipe-compile: partition for N devices and compile, into
     work/compiled-<key>, where <key> hashes the model IR, the plan's options
     and the compilers' binaries, so a second run with the same model and
     options starts training at once;
  3. ftpipe-run --np N: trains from the checkpoint's weights (bf16, f16 or
     f32, sharded or not), evaluates the held-out set, and writes OUT/model:
     a directory that transformers' from_pretrained loads (config, shards,
     tokenizer files, in the checkpoint's dtype unless --save-dtype).
Progress per epoch (samples/s, loss, held-out loss and metric, time left)
goes to
stderr; work/run.log keeps ftpipe-run's output and work/eval.csv the
evaluations (tools/ftpipe-run/plot-eval.py plots them). The data sets come
from ftpipe-data. Standard library only; the tools are looked up beside this
script, then on PATH. As root, OpenMPI wants OMPI_ALLOW_RUN_AS_ROOT=1 and
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the environment.
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time

# Inputs whose second dimension is the encoder's (or only) sequence, and the
# decoder's (T5).
ENCODER_INPUTS = ("input_ids",)
DECODER_INPUTS = ("decoder_input_ids",)
MAX_HEADER_BYTES = 100_000_000


def fail(message):
    sys.exit("ftpipe-finetune: error: " + message)


def tool(name):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which(name)
    if not found:
        fail("%s is neither beside ftpipe-finetune nor on PATH" % name)
    return found


def dataset_shapes(path):
    """name -> shape of a safetensors data set (its header only)."""
    try:
        with open(path, "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            if length > MAX_HEADER_BYTES:
                fail("%s: not a safetensors data set (a header of %d bytes)"
                     % (path, length))
            header = json.loads(f.read(length))
    except (OSError, struct.error, ValueError) as error:
        fail("%s: not a safetensors data set (%s)" % (path, error))
    return {name: entry["shape"] for name, entry in header.items()
            if name != "__metadata__"}


def sequence_lengths(shapes, path):
    encoder = [shapes[n][1] for n in ENCODER_INPUTS if n in shapes]
    if not encoder:
        fail("%s has no input_ids: not a data set of ftpipe-data" % path)
    decoder = [shapes[n][1] for n in DECODER_INPUTS if n in shapes]
    return encoder[0], (decoder[0] if decoder else None)


def file_digest(path, digest):
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)


def run_logged(command, log_path, what):
    """Runs `command`, its output into `log_path`; fails naming `what`."""
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT)
    if code != 0:
        with open(log_path) as log:
            tail = log.read().strip().splitlines()[-5:]
        fail("%s failed (exit %d; %s):\n  %s" % (what, code, log_path,
                                                 "\n  ".join(tail)))


def format_time(seconds):
    seconds = int(seconds)
    return "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


def metric_of(text):
    """The task's metric in an ftpipe-run evaluation line, shortened."""
    words = text.split()
    for i, word in enumerate(words[:-2]):
        if word == "token" and words[i + 1] == "accuracy":
            return "acc %.4f" % float(words[i + 2])
        if word == "exact" and words[i + 1] == "match" and i + 4 < len(words):
            return "EM %.4f F1 %.4f" % (float(words[i + 2]),
                                        float(words[i + 4]))
    return ""


class Progress:
    """Per epoch: a bar, samples/s, training loss, held-out loss and metric,
    time left."""

    def __init__(self, steps, steps_per_epoch, epochs, samples_per_step,
                 eval_every):
        self.steps, self.per_epoch, self.epochs = steps, steps_per_epoch, epochs
        # Evaluations after these steps come after their step's line: an
        # epoch that ends there waits for its evaluation.
        self.eval_every = eval_every
        self.samples_per_step = samples_per_step
        self.start = time.monotonic()
        self.loss = self.eval_loss = self.perplexity = None
        # The task's metric of the last evaluation, as "acc 0.1234" or
        # "EM 0.5000 F1 0.6667" (empty: the model returns none).
        self.metric = ""
        self.done = 0
        self.tty = sys.stderr.isatty()

    def line(self, text):
        words = text.split()
        if text.startswith("step ") and len(words) >= 4:
            self.done = int(words[1]) + 1
            self.loss = float(words[3])
            epoch_end = (self.done % self.per_epoch == 0 or
                         self.done == self.steps)
            evaluated = self.eval_every and (
                self.done % self.eval_every == 0 or self.done == self.steps)
            if not (epoch_end and evaluated):
                self.show(epoch_end)
        elif text.startswith("eval step ") and len(words) >= 7:
            self.eval_loss, self.perplexity = float(words[4]), float(words[6])
            self.metric = metric_of(text)
            after = int(words[2])
            if after > 0 and (after % self.per_epoch == 0 or after == self.steps):
                self.show(True)
            if after == 0:
                print("ftpipe-finetune: held-out loss before training %.4f "
                      "(perplexity %.2f%s)" % (
                          self.eval_loss, self.perplexity,
                          ", " + self.metric if self.metric else ""),
                      file=sys.stderr)

    def show(self, epoch_end):
        elapsed = time.monotonic() - self.start
        epoch = min((self.done - 1) // self.per_epoch + 1, self.epochs)
        in_epoch = self.done - (epoch - 1) * self.per_epoch
        width = 20
        filled = int(width * in_epoch / self.per_epoch)
        rate = self.done * self.samples_per_step / max(elapsed, 1e-9)
        left = elapsed / self.done * (self.steps - self.done)
        text = "epoch %d/%d [%s%s] %d/%d %.1f samples/s loss %.4f" % (
            epoch, self.epochs, "#" * filled, "." * (width - filled),
            in_epoch, self.per_epoch, rate, self.loss)
        if self.eval_loss is not None:
            text += " eval %.4f ppl %.2f" % (self.eval_loss, self.perplexity)
            if self.metric:
                text += " " + self.metric
        text += " left %s" % format_time(left)
        if self.tty:
            sys.stderr.write("\r" + text + ("\n" if epoch_end else ""))
        elif epoch_end:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="Hugging Face checkpoint directory")
    parser.add_argument("--data", required=True,
                        help="training set (ftpipe-data's safetensors)")
    parser.add_argument("--eval-data", help="held-out set (ftpipe-data's)")
    parser.add_argument("--eval-every", type=int, default=0,
                        help="evaluate every N steps (default: each epoch)")
    parser.add_argument("--devices", type=int, required=True,
                        help="pipeline devices (MPI processes)")
    parser.add_argument("--hardware", default="rtx2080ti-pcie-x8",
                        help="preset or cluster JSON the plan is made for")
    parser.add_argument("--method", default="mixed-pipe",
                        choices=["mixed-pipe", "seq-dp", "auto"])
    parser.add_argument("--schedule", default="1f1b",
                        choices=["gpipe", "1f1b", "async"])
    parser.add_argument("--micro-batch-size", type=int, default=2)
    parser.add_argument("--micro-batches", type=int, default=4,
                        help="micro-batches per optimizer step")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--epochs", type=float, default=1.0)
    group.add_argument("--steps", type=int)
    parser.add_argument("--optimizer", default="adamw",
                        choices=["sgd", "adam", "adamw", "adafactor"])
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--save-dtype", choices=["bf16", "f16", "f32"])
    parser.add_argument("--save-shard-size", default="5GB")
    parser.add_argument("-O", dest="opt_level", default="2",
                        choices=["0", "1", "2", "3"],
                        help="optimisation level of the compiled code")
    parser.add_argument("-o", dest="output", required=True,
                        help="output directory: model/ (the fine-tuned "
                             "checkpoint) and work/ (every intermediate file)")
    opts = parser.parse_args()

    checkpoint = opts.checkpoint
    if not os.path.isfile(os.path.join(checkpoint, "config.json")):
        fail("%s: no config.json: not a Hugging Face checkpoint directory"
             % checkpoint)
    if opts.devices < 1 or opts.micro_batch_size < 1 or opts.micro_batches < 1:
        fail("--devices, --micro-batch-size and --micro-batches must be "
             "at least 1")
    if opts.eval_data and opts.schedule == "async":
        fail("--eval-data evaluates between steps, which the async schedule "
             "does not flush: use gpipe or 1f1b")
    shapes = dataset_shapes(opts.data)
    seq_len, decoder_len = sequence_lengths(shapes, opts.data)
    if opts.eval_data:
        eval_shapes = dataset_shapes(opts.eval_data)
        if {n: s[1:] for n, s in eval_shapes.items()} != \
                {n: s[1:] for n, s in shapes.items()}:
            fail("%s holds other inputs than %s" % (opts.eval_data, opts.data))
    samples = next(iter(shapes.values()))[0]
    samples_per_step = opts.micro_batch_size * opts.micro_batches
    steps_per_epoch = max(1, samples // samples_per_step)
    if opts.steps:
        steps = opts.steps
        epochs = math.ceil(steps / steps_per_epoch)
    else:
        steps = max(1, round(opts.epochs * steps_per_epoch))
        epochs = math.ceil(steps / steps_per_epoch)
    eval_every = opts.eval_every or steps_per_epoch

    work = os.path.join(opts.output, "work")
    os.makedirs(work, exist_ok=True)

    # 1. The model IR.
    model = os.path.join(work, "model.mlir")
    # The model also returns what the task's metric needs (evaluations
    # report it; one compiled model with and without a held-out set).
    command = [tool("ftpipe-model-gen"), checkpoint, "--loss", "--metrics",
               "--seq-len=%d" % seq_len,
               "--micro-batch-size=%d" % opts.micro_batch_size,
               "--quiet", "-o", model]
    if decoder_len:
        command.append("--decoder-seq-len=%d" % decoder_len)
    run_logged(command, os.path.join(work, "model-gen.log"), "ftpipe-model-gen")

    # 2. Partition and compile, unless this model and plan are compiled.
    plan = ["--target=cpu", "--devices=%d" % opts.devices,
            "--method=%s" % opts.method, "--hardware=%s" % opts.hardware,
            "--schedule=%s" % opts.schedule,
            "--microbatches=%d" % opts.micro_batches,
            "--optimizer=%s" % opts.optimizer, "-O%s" % opts.opt_level]
    digest = hashlib.sha256()
    file_digest(model, digest)
    digest.update("\0".join(plan).encode())
    for name in ("ftpipe-compile", "ftpipe-model-gen"):
        file_digest(tool(name), digest)
    compiled = os.path.join(work, "compiled-" + digest.hexdigest()[:16])
    if os.path.isfile(os.path.join(compiled, "manifest.json")):
        print("ftpipe-finetune: compiled model found: %s" % compiled,
              file=sys.stderr)
    else:
        print("ftpipe-finetune: partitioning for %d devices and compiling "
              "into %s" % (opts.devices, compiled), file=sys.stderr)
        started = time.monotonic()
        partial = compiled + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        run_logged([tool("ftpipe-compile"), model] + plan + ["-o", partial],
                   os.path.join(work, "compile.log"), "ftpipe-compile")
        os.rename(partial, compiled)
        print("ftpipe-finetune: compiled in %.1f s" %
              (time.monotonic() - started), file=sys.stderr)

    # 3. Train, evaluate, save.
    saved = os.path.join(opts.output, "model")
    command = [tool("ftpipe-run"), compiled, "--np", str(opts.devices),
               "--data", opts.data, "--weights", checkpoint,
               "--schedule", opts.schedule,
               "--micro-batches", str(opts.micro_batches),
               "--steps", str(steps), "--optimizer", opts.optimizer,
               "--lr", repr(opts.lr), "--weight-decay", repr(opts.weight_decay),
               "--warmup", str(opts.warmup), "--save", saved,
               "--save-format", "hf", "--save-shard-size", opts.save_shard_size]
    if opts.save_dtype:
        command += ["--save-dtype", opts.save_dtype]
    if opts.eval_data:
        command += ["--eval-data", opts.eval_data, "--eval-every",
                    str(eval_every), "--eval-csv",
                    os.path.join(work, "eval.csv")]
    print("ftpipe-finetune: %d samples, %d steps of %d samples (%d epochs) "
          "on %d processes" % (samples, steps, samples_per_step, epochs,
                               opts.devices), file=sys.stderr)
    progress = Progress(steps, steps_per_epoch, epochs, samples_per_step,
                        eval_every if opts.eval_data else 0)
    log_path = os.path.join(work, "run.log")
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(command) + "\n")
        process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        for text in process.stdout:
            log.write(text)
            progress.line(text.strip())
        code = process.wait()
    if code != 0:
        with open(log_path) as log:
            tail = log.read().strip().splitlines()[-5:]
        fail("ftpipe-run failed (exit %d; %s):\n  %s" % (
            code, log_path, "\n  ".join(tail)))
    summary = "ftpipe-finetune: %s: the fine-tuned checkpoint" % saved
    if progress.eval_loss is not None:
        summary += " (held-out loss %.4f, perplexity %.2f%s)" % (
            progress.eval_loss, progress.perplexity,
            ", " + progress.metric if progress.metric else "")
    print(summary, file=sys.stderr)


if __name__ == "__main__":
    main()
