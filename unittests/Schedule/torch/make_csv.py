"""Writes the compute_only CSVs that torch.distributed.pipelining's own
zero-bubble schedules dump (`_dump_csv`), for ScheduleTest's interop test.

Run with the reference environment (torch 2.15):
  /work/venv-ref/bin/python unittests/Schedule/torch/make_csv.py \
      unittests/Schedule/torch
The schedules' per-rank action lists come from
`_calculate_single_rank_operations`, which needs no process group; the rows
are written as `_dump_csv` writes `pipeline_order` (csv.writer, None for an
idle slot).
"""
import csv
import os
import sys

from torch.distributed.pipelining.schedules import (
    ScheduleInterleavedZeroBubble,
    ScheduleZBVZeroBubble,
)


def dump(order, path):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for rank in order:
            writer.writerow(order[rank])


def ranks(schedule, count):
    return {r: schedule._calculate_single_rank_operations(r) for r in range(count)}


def main(out):
    # ZB-V: 2 ranks, 4 stages in a V (rank 0: stages 0 and 3, rank 1: 1 and 2).
    zbv = object.__new__(ScheduleZBVZeroBubble)
    zbv.pp_group_size, zbv.num_stages, zbv._n_microbatches = 2, 4, 4
    dump(ranks(zbv, 2), os.path.join(out, "zbv-2ranks-4stages-mb4.csv"))
    # ZB-V: 4 ranks, 8 stages (rank r: stages r and 7 - r), 8 micro-batches.
    zbv.pp_group_size, zbv.num_stages, zbv._n_microbatches = 4, 8, 8
    dump(ranks(zbv, 4), os.path.join(out, "zbv-4ranks-8stages-mb8.csv"))
    # Interleaved zero bubble: 2 ranks, 4 stages looped (rank r: r and r + 2),
    # 4 micro-batches; the constructor's steps, bubbles included.
    izb = object.__new__(ScheduleInterleavedZeroBubble)
    izb.pp_group_size, izb.n_local_stages, izb._n_microbatches = 2, 2, 4
    izb.number_of_rounds = max(1, 4 // 2)
    izb.microbatches_per_round = 4 // izb.number_of_rounds
    izb.pipeline_order = ranks(izb, 2)
    izb.pipeline_order = izb._add_bubbles_to_actions(2 * 2)
    dump(izb.pipeline_order, os.path.join(out, "interleaved-zb-2ranks-4stages-mb4.csv"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
