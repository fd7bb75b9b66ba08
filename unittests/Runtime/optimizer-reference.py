#!/usr/bin/env python3
"""Reference trajectories of the runtime's optimizers, computed by PyTorch.

Writes optimizer-reference.json next to this file: for SGD with momentum
(torch.optim.SGD), AdamW (torch.optim.AdamW) and Adafactor
(transformers.optimization.Adafactor with an explicit learning rate), each
with the linear warm-up of transformers' get_constant_schedule_with_warmup,
the initial parameters, the gradients of every step and PyTorch's final
parameters. OptimizerTest.cpp replays the gradients through lib/Runtime's
optimizers and compares. Run in the reference environment:
    build/.venv-ref/bin/python unittests/Runtime/optimizer-reference.py
"""
import json
import math
import os

import torch
from transformers.optimization import Adafactor, get_constant_schedule_with_warmup

STEPS = 6
SHAPES = {"matrix": [3, 4], "vector": [5], "cube": [2, 3, 4]}


def initial(k, n):
    return [math.cos(0.37 * i + 0.2 * k) for i in range(n)]


def gradient(k, n, t):
    return [math.sin(0.7 * i + 1.3 * t + k) * (1 + 0.1 * t) for i in range(n)]


def run(case):
    params, records = [], []
    for k, (name, shape) in enumerate(SHAPES.items()):
        n = math.prod(shape)
        p = torch.tensor(initial(k, n), dtype=torch.float32).reshape(shape)
        params.append(torch.nn.Parameter(p.clone()))
        records.append({"name": name, "shape": shape,
                        "initial": p.flatten().tolist(), "grads": []})
    kind = case["optimizer"]
    if kind == "sgd":
        opt = torch.optim.SGD(params, lr=case["lr"], momentum=case["momentum"],
                              weight_decay=case["weight_decay"])
    elif kind == "adamw":
        opt = torch.optim.AdamW(params, lr=case["lr"], betas=(0.9, 0.999),
                                eps=1e-8, weight_decay=case["weight_decay"])
    else:
        opt = Adafactor(params, lr=case["lr"], relative_step=False,
                        scale_parameter=False, warmup_init=False,
                        weight_decay=case["weight_decay"])
    schedule = get_constant_schedule_with_warmup(opt, case["warmup"])
    for t in range(STEPS):
        for k, (p, record) in enumerate(zip(params, records)):
            g = gradient(k, p.numel(), t)
            record["grads"].append(torch.tensor(g, dtype=torch.float32).tolist())
            p.grad = torch.tensor(g, dtype=torch.float32).reshape(p.shape)
        opt.step()
        schedule.step()
    for p, record in zip(params, records):
        record["final"] = p.detach().flatten().tolist()
    return dict(case, params=records)


CASES = [
    {"optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "weight_decay": 0.01, "warmup": 2},
    {"optimizer": "adamw", "lr": 0.01, "weight_decay": 0.01, "warmup": 2},
    {"optimizer": "adamw", "lr": 0.003, "weight_decay": 0.0, "warmup": 0},
    {"optimizer": "adafactor", "lr": 0.01, "weight_decay": 0.0, "warmup": 2},
    {"optimizer": "adafactor", "lr": 0.05, "weight_decay": 0.01, "warmup": 0},
]

if __name__ == "__main__":
    out = {"torch": torch.__version__, "steps": STEPS,
           "cases": [run(case) for case in CASES]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "optimizer-reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
