#!/usr/bin/env python3
"""GPT-2 trained by PyTorch's own means, the peers of ftpipe-run (issue 25).

Usage (from the reference environment, /work/venv-ref):
  peer_gpt2.py CONFIG.json --mode eager|gpipe|1f1b [--steps 2]
               [--micro-batches 4] [--seed 0] [--save-weights FILE]

CONFIG is a Hugging Face GPT-2 config with FTPipe's "ftpipe" entry
(micro_batch_size, seq_len), e.g. bench/models/gpt2-124m.json. Every step
trains on M micro-batches of zeros (token 0, the data set of
bench/real_size_memory.sh) with AdamW, one thread per process:
- eager: one process, the whole model, the micro-batches' gradients
  accumulated (each micro-batch's loss over M);
- gpipe, 1f1b: torch.distributed.pipelining over 2 processes (gloo), the
  blocks split evenly (the embedding with the first half, the final norm and
  an untied copy of the head with the second, as its users split GPT-2),
  ScheduleGPipe or Schedule1F1B (gradients scaled by 1 / M as well).
Prints one line per step ("step S loss L seconds T") and, per process,
"rank R peak resident MiB" (ru_maxrss). --save-weights writes the initial
weights (Hugging Face names, safetensors) for `ftpipe-run --weights`, so that
its losses can be compared with these. Not a test.
"""
import argparse
import json
import os
import resource
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from transformers import GPT2Config, GPT2LMHeadModel


def build(config_path, seed):
    with open(config_path) as f:
        raw = json.load(f)
    ftpipe = raw.pop("ftpipe")
    config = GPT2Config(**raw)
    config._attn_implementation = "sdpa"
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    model.train()
    # No dropout: the runs are compared step by step.
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return model, ftpipe["micro_batch_size"], ftpipe["seq_len"]


def loss_of(logits, labels):
    """Hugging Face's causal LM loss: each position predicts the next."""
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


class FirstHalf(torch.nn.Module):
    def __init__(self, model, blocks):
        super().__init__()
        self.wte, self.wpe = model.transformer.wte, model.transformer.wpe
        self.h = torch.nn.ModuleList(blocks)

    def forward(self, ids):
        positions = torch.arange(ids.size(1)).unsqueeze(0)
        x = self.wte(ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)[0]
        return x


class SecondHalf(torch.nn.Module):
    def __init__(self, model, blocks):
        super().__init__()
        self.h = torch.nn.ModuleList(blocks)
        self.ln_f = model.transformer.ln_f
        self.head = torch.nn.Linear(model.config.n_embd, model.config.vocab_size,
                                    bias=False)
        with torch.no_grad():
            self.head.weight.copy_(model.transformer.wte.weight)

    def forward(self, x):
        for block in self.h:
            x = block(x)[0]
        return self.head(self.ln_f(x))


def peak_resident_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def data(micro_batches, micro_batch_size, seq_len):
    ids = torch.zeros(micro_batches * micro_batch_size, seq_len,
                      dtype=torch.long)
    return ids, ids.clone()


def run_eager(args):
    torch.set_num_threads(1)
    model, mbs, seq = build(args.config, args.seed)
    if args.save_weights:
        from safetensors.torch import save_file
        save_file({k: v.contiguous() for k, v in model.state_dict().items()
                   if k != "lm_head.weight"}, args.save_weights)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                  weight_decay=args.weight_decay)
    ids, labels = data(args.micro_batches, mbs, seq)
    for step in range(args.steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        total = 0.0
        for ids_mb, labels_mb in zip(ids.split(mbs), labels.split(mbs)):
            loss = loss_of(model(ids_mb).logits, labels_mb)
            (loss / args.micro_batches).backward()
            total += loss.item()
        optimizer.step()
        print(f"step {step} loss {total / args.micro_batches:.6f} seconds "
              f"{time.perf_counter() - start:.3f}", flush=True)
    print(f"rank 0 peak resident {peak_resident_mib():.1f} MiB", flush=True)


def run_stage(rank, args, port):
    from torch.distributed.pipelining import (PipelineStage, Schedule1F1B,
                                              ScheduleGPipe)
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    model, mbs, seq = build(args.config, args.seed)
    half = model.config.n_layer // 2
    blocks = list(model.transformer.h)
    module = (FirstHalf(model, blocks[:half]) if rank == 0
              else SecondHalf(model, blocks[half:]))
    del model
    stage = PipelineStage(module, rank, 2, torch.device("cpu"))
    kind = ScheduleGPipe if args.mode == "gpipe" else Schedule1F1B
    schedule = kind(stage, n_microbatches=args.micro_batches, loss_fn=loss_of)
    optimizer = torch.optim.AdamW(module.parameters(), lr=args.lr,
                                  weight_decay=args.weight_decay)
    ids, labels = data(args.micro_batches, mbs, seq)
    for step in range(args.steps):
        dist.barrier()
        start = time.perf_counter()
        optimizer.zero_grad()
        losses = []
        if rank == 0:
            schedule.step(ids)
        else:
            schedule.step(target=labels, losses=losses)
        optimizer.step()
        dist.barrier()
        if rank == 1:
            loss = sum(l.item() for l in losses) / len(losses)
            print(f"step {step} loss {loss:.6f} seconds "
                  f"{time.perf_counter() - start:.3f}", flush=True)
    dist.barrier()
    for r in range(2):
        if r == rank:
            print(f"rank {rank} peak resident {peak_resident_mib():.1f} MiB",
                  flush=True)
        dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("--mode", choices=["eager", "gpipe", "1f1b"],
                        required=True)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--port", type=int, default=29517)
    parser.add_argument("--save-weights")
    args = parser.parse_args()
    if args.mode == "eager":
        run_eager(args)
    else:
        mp.spawn(run_stage, args=(args, args.port), nprocs=2)


if __name__ == "__main__":
    main()
