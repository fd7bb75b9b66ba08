#!/usr/bin/env python3
# schedule_order.py - the schedule model's per-device action lists, as
# ftpipe-run --print-schedule prints them, run in turn on one thread: what
# train_cuda_artifacts.py follows to run a pipeline schedule's forwards,
# backwards and updates on one GPU. No dependency beyond Python.
#
#   schedule_order.py SCHEDULE.txt --stages S0,S1,...
#       prints the order (one action a line: "F 0 3", "B 2 1", "U 0") for the
#       stages in that order, every stage with a backward; for tests.

import argparse
import re

ACTION = re.compile(r"(\d+)([FB])(\d+)|U(\d+)")


def parse_schedule(text):
    """device -> its actions: ("F" | "B", stage, micro-batch) or
    ("U", step, None)."""
    lists = {}
    for line in text.splitlines():
        if not line.startswith("device"):
            continue
        head, actions = line.split(":", 1)
        device = int(head.split()[1])
        lists[device] = []
        for action in actions.split():
            match = ACTION.fullmatch(action)
            if not match:
                raise SystemExit("error: action '%s' of device %d: only "
                                 "forwards, backwards and updates run here"
                                 % (action, device))
            if match.group(4) is not None:
                lists[device].append(("U", int(match.group(4)), None))
            else:
                lists[device].append((match.group(2), int(match.group(1)),
                                      int(match.group(3))))
    if not lists:
        raise SystemExit("error: no 'device N:' line in the schedule")
    return lists


def in_turn(lists, stage_order, has_backward):
    """Every action of `lists` in one order that a single thread can run:
    each device's in its own order; F(s, m) after the forwards of the stages
    before s in `stage_order`, B(s, m) after the backwards of the stages
    after s (those in `has_backward`); a step's update ("U", k, None) once,
    when every device has reached its U k. Fails if no device can go on."""
    position = {s: i for i, s in enumerate(stage_order)}
    before = {s: stage_order[:position[s]] for s in stage_order}
    after = {s: [t for t in stage_order[position[s] + 1:] if t in has_backward]
             for s in stage_order}
    done, order = set(), []
    next_index = {d: 0 for d in lists}

    def ready(action):
        kind, stage, mb = action
        if kind == "F":
            return all(("F", t, mb) in done for t in before[stage])
        return all(("B", t, mb) in done for t in after[stage])

    while any(next_index[d] < len(lists[d]) for d in lists):
        progressed = False
        for d in sorted(lists):
            while next_index[d] < len(lists[d]):
                action = lists[d][next_index[d]]
                if action[0] == "U" or not ready(action):
                    break
                order.append(action)
                done.add(action)
                next_index[d] += 1
                progressed = True
        heads = [lists[d][next_index[d]] for d in lists
                 if next_index[d] < len(lists[d])]
        if heads and all(h[0] == "U" for h in heads) and \
                len(heads) == len(lists) and len(set(heads)) == 1:
            order.append(heads[0])
            for d in lists:
                next_index[d] += 1
            progressed = True
        if not progressed:
            raise SystemExit("error: the schedule cannot run in turn on one "
                             "thread: the devices wait at %s" % ", ".join(
                                 "%d: %s" % (d, lists[d][next_index[d]])
                                 for d in sorted(lists)
                                 if next_index[d] < len(lists[d])))
    return order


def main():
    parser = argparse.ArgumentParser(description="runs action lists in turn")
    parser.add_argument("schedule")
    parser.add_argument("--stages", required=True)
    opts = parser.parse_args()
    stages = [int(s) for s in opts.stages.split(",")]
    for kind, first, second in in_turn(
            parse_schedule(open(opts.schedule).read()), stages, set(stages)):
        print(kind, first, *([] if second is None else [second]))


if __name__ == "__main__":
    main()
