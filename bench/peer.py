#!/usr/bin/env python3
"""GPT-2, BERT QA and LLaMA trained by PyTorch's own means, the peers of
ftpipe-run (issue 25).

Usage (from the reference environment, /work/venv-ref):
  peer.py CONFIG.json --data DATA.safetensors --mode eager|gpipe|1f1b
          [--steps 3] [--micro-batches 4] [--lr 1e-3] [--weight-decay 0.01]
          [--seed 0] [--save-weights FILE] [--split N]

CONFIG is a Hugging Face config (model_type gpt2, bert or llama) with
FTPipe's "ftpipe" entry (micro_batch_size, seq_len), e.g.
bench/models/gpt2-124m.json. DATA is the data set ftpipe-run reads (the
model's inputs by Hugging Face name, micro-batches * micro_batch_size
samples): every step trains on all of it, split into the micro-batches,
with AdamW, one thread per process, no dropout:
- eager: one process, the Hugging Face model and its own loss, the
  micro-batches' gradients accumulated (each micro-batch's loss over M);
- gpipe, 1f1b: torch.distributed.pipelining over 2 processes (gloo), the
  blocks split evenly as its users split a model (or the first N blocks on
  the first stage with --split N, to cut where an ftpipe plan of two stages
  cuts): the embeddings with the first part, the final norm and the head
  with the second (a tied head is an untied copy there), ScheduleGPipe or
  Schedule1F1B (each micro-batch's loss over M as well).
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
import transformers
from safetensors.torch import load_file, save_file

DROPOUTS = ("resid_pdrop", "embd_pdrop", "attn_pdrop", "hidden_dropout_prob",
            "attention_probs_dropout_prob", "attention_dropout")


def causal_loss(logits, labels):
    """Hugging Face's causal LM loss: each position predicts the next."""
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.size(-1)).float(),
        labels[:, 1:].reshape(-1))


def span_loss(logits, positions):
    """BertForQuestionAnswering's loss on [B, S, 2] logits and [B, 2]
    (start, end) positions: the mean of the two cross-entropies."""
    seq_len = logits.size(1)
    positions = positions.clamp(0, seq_len)
    ce = torch.nn.CrossEntropyLoss(ignore_index=seq_len)
    return (ce(logits[..., 0], positions[:, 0]) +
            ce(logits[..., 1], positions[:, 1])) / 2


class GPT2Embedding(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.wte, self.wpe = model.transformer.wte, model.transformer.wpe

    def forward(self, ids):
        return self.wte(ids) + self.wpe(torch.arange(ids.size(1)).unsqueeze(0))


def untied_head(embedding):
    """The last stage's copy of a head tied to the first stage's embedding."""
    head = torch.nn.Linear(embedding.weight.size(1), embedding.weight.size(0),
                           bias=False)
    with torch.no_grad():
        head.weight.copy_(embedding.weight)
    return head


def head_of(model, embedding):
    tied = model.config.tie_word_embeddings
    return untied_head(embedding) if tied else model.get_output_embeddings()


class Family:
    """What differs between the families: the Hugging Face class, the loss,
    the pipeline's target and the modules around the blocks."""

    def __init__(self, model_type):
        self.model_type = model_type
        self.model_class = {
            "gpt2": transformers.GPT2LMHeadModel,
            "bert": transformers.BertForQuestionAnswering,
            "llama": transformers.LlamaForCausalLM,
        }[model_type]
        self.loss = span_loss if model_type == "bert" else causal_loss

    def target(self, data):
        if self.model_type == "bert":
            return torch.stack([data["start_positions"],
                                data["end_positions"]], 1)
        return data["labels"]

    def blocks(self, model):
        return {"gpt2": lambda: model.transformer.h,
                "bert": lambda: model.bert.encoder.layer,
                "llama": lambda: model.model.layers}[self.model_type]()

    def front(self, model):
        return {"gpt2": lambda: GPT2Embedding(model),
                "bert": lambda: model.bert.embeddings,
                "llama": lambda: model.model.embed_tokens}[self.model_type]()

    def back(self, model):
        if self.model_type == "gpt2":
            return torch.nn.Sequential(
                model.transformer.ln_f, head_of(model, model.transformer.wte))
        if self.model_type == "llama":
            return torch.nn.Sequential(
                model.model.norm, head_of(model, model.model.embed_tokens))
        return model.qa_outputs

    def rotary(self, model):
        return model.model.rotary_emb if self.model_type == "llama" else None


class Half(torch.nn.Module):
    """One pipeline stage: the front (embeddings) or not, a run of blocks,
    the back (final norm and head) or not."""

    def __init__(self, front, blocks, back, rotary):
        super().__init__()
        self.front, self.back, self.rotary = front, back, rotary
        self.blocks = torch.nn.ModuleList(blocks)

    def forward(self, x):
        if self.front is not None:
            x = self.front(x)
        extra = {}
        if self.rotary is not None:
            positions = torch.arange(x.size(1)).unsqueeze(0)
            extra["position_embeddings"] = self.rotary(x, positions)
        for block in self.blocks:
            x = block(x, **extra)
            x = x[0] if isinstance(x, tuple) else x
        return self.back(x) if self.back is not None else x


def build(config_path, seed):
    with open(config_path) as f:
        raw = json.load(f)
    raw.pop("ftpipe")
    raw.update({key: 0.0 for key in DROPOUTS})
    config = transformers.AutoConfig.for_model(raw.pop("model_type"), **raw)
    config._attn_implementation = "sdpa"
    family = Family(config.model_type)
    torch.manual_seed(seed)
    model = family.model_class(config)
    model.train()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return family, model


def read_data(path):
    return {name: tensor.long() for name, tensor in load_file(path).items()}


def peak_resident_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def adamw(parameters, args):
    return torch.optim.AdamW(parameters, lr=args.lr,
                             weight_decay=args.weight_decay)


def run_eager(args):
    torch.set_num_threads(1)
    family, model = build(args.config, args.seed)
    if args.save_weights:
        save_file({name: p.detach().contiguous()
                   for name, p in model.named_parameters()}, args.save_weights)
    optimizer = adamw(model.parameters(), args)
    data = read_data(args.data)
    micro_batches = [dict(zip(data, values)) for values in
                     zip(*(t.chunk(args.micro_batches) for t in data.values()))]
    for step in range(args.steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        total = 0.0
        for inputs in micro_batches:
            loss = model(**inputs).loss
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
    family, model = build(args.config, args.seed)
    blocks = list(family.blocks(model))
    half = args.split if args.split is not None else len(blocks) // 2
    if not 0 < half < len(blocks):
        raise SystemExit(f"--split {half}: the model has {len(blocks)} blocks")
    if rank == 0:
        module = Half(family.front(model), blocks[:half], None,
                      family.rotary(model))
    else:
        module = Half(None, blocks[half:], family.back(model),
                      family.rotary(model))
    del model
    stage = PipelineStage(module, rank, 2, torch.device("cpu"))
    kind = ScheduleGPipe if args.mode == "gpipe" else Schedule1F1B
    schedule = kind(stage, n_microbatches=args.micro_batches,
                    loss_fn=family.loss)
    optimizer = adamw(module.parameters(), args)
    data = read_data(args.data)
    ids, target = data["input_ids"], family.target(data)
    for step in range(args.steps):
        dist.barrier()
        start = time.perf_counter()
        optimizer.zero_grad()
        losses = []
        if rank == 0:
            schedule.step(ids)
        else:
            schedule.step(target=target, losses=losses)
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
    parser.add_argument("--data", required=True)
    parser.add_argument("--mode", choices=["eager", "gpipe", "1f1b"],
                        required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--port", type=int, default=29517)
    parser.add_argument("--save-weights")
    parser.add_argument("--split", type=int,
                        help="blocks on the first stage (default: half)")
    args = parser.parse_args()
    if args.mode == "eager":
        run_eager(args)
    else:
        mp.spawn(run_stage, args=(args, args.port), nprocs=2)


if __name__ == "__main__":
    main()
