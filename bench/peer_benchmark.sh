#!/usr/bin/env bash
# peer_benchmark.sh [BUILD] [CONFIG] [STEPS] - ftpipe-run against PyTorch's
# own pipeline and PyTorch eager on one model (issue 25; not a test).
#
# CONFIG (default bench/models/gpt2-124m.json): a Hugging Face config of
# GPT-2, BERT (question answering) or LLaMA with FTPipe's micro-batch entry
# (bench/models/: gpt2-124m, bert-base-qa, smollm-135m). Compiles it for 2
# devices (wall and CPU time), writes one data set (4 micro-batches of random
# tokens, attention mask ones, random answer spans for BERT) and PyTorch's
# initial weights (bench/peer.py --save-weights), then trains STEPS (default
# 3; also the STEPS variable) steps on it with AdamW (lr 1e-3, weight decay
# 0.01), one thread per process, every run from the same weights and data:
# PyTorch eager in one process, torch.distributed.pipelining GPipe and 1F1B
# over 2 processes (gloo, blocks split evenly; TORCH_MODES, default "gpipe
# 1f1b"), and ftpipe-run on its own plan under SCHEDULES (default "gpipe
# 1f1b zb-h1 zb-auto async": the zero-bubble schedules split each backward
# into its input and weight parts and are synchronous and exact; async runs
# with weight stashing). COMPILE_ARGS go to ftpipe-compile (e.g.
# "--method=seq-dp --recompute=false" for a plan of two contiguous stages);
# the blocks each device's plan holds are printed, so that PEER_ARGS="--split
# N" can cut torch's model at the same block. PEER_ARGS go to every
# bench/peer.py run (e.g. "--lr 2e-3", which the check below catches:
# test/Reference/peer-benchmark.test). Prints one table: the last step's
# time, the speed-up over eager, each process's peak resident memory
# (ftpipe-run: also its peak tensor memory against the plan's), and every
# step's loss with the largest relative difference from eager's. Exits 1
# when a synchronous ftpipe-run's loss differs from eager's by more than
# 1e-4 relative (async trains on stale weights, PyTorch's pipeline an untied
# head: printed, not checked), or when a run printed no losses. Runs from
# the reference environment (PEER_PYTHON, default
# /work/venv-ref/bin/python). The load average is printed: step times
# depend on it, memory and losses do not.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
config="${2:-$root/bench/models/gpt2-124m.json}"
steps="${3:-${STEPS:-3}}"
schedules="${SCHEDULES-gpipe 1f1b zb-h1 zb-auto async}"
torch_modes="${TORCH_MODES-gpipe 1f1b}"
python="${PEER_PYTHON:-/work/venv-ref/bin/python}"
bin="$build/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
micro_batches=4

echo "date $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $(basename "$config")"
"$bin/ftpipe-model-gen" "$config" --loss -o "$work/model.mlir"
/usr/bin/time -f "%e %U %S" -o "$work/compile.time" \
  "$bin/ftpipe-compile" "$work/model.mlir" --devices=2 --optimizer=adamw \
  --microbatches=$micro_batches ${COMPILE_ARGS:-} -o "$work/art" \
  2> "$work/compile.log"
read -r wall user sys < "$work/compile.time"
echo "ftpipe-compile --devices=2 ${COMPILE_ARGS:-}: wall $wall s, CPU $user s user + $sys s system"
python3 - "$work/art/manifest.json" <<'PY'
import collections, json, re, sys
blocks = collections.defaultdict(set)
for name, param in json.load(open(sys.argv[1]))["parameters"].items():
    block = re.search(r"\.(?:h|layer|layers)\.(\d+)\.", name)
    if block:
        blocks[param["owner"]].add(int(block.group(1)))
print("ftpipe's plan: " + "; ".join(
    f"device {d} blocks {sorted(b)}" for d, b in sorted(blocks.items())))
PY
mbs="$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(m["inputs"]["input_ids"]["shape"][0])' "$work/art/manifest.json")"
python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/art" \
  $((micro_batches * mbs)) "$work/data.safetensors"
# Random tokens (labels are the inputs, as Hugging Face's causal LMs take
# them), every token attended, one segment, random answer spans.
$python - "$work/data.safetensors" "$config" <<'PY'
import json, sys
import numpy as np
from safetensors.numpy import load_file, save_file
tensors = load_file(sys.argv[1])
vocab = json.load(open(sys.argv[2]))["vocab_size"]
rng = np.random.default_rng(0)
ids = tensors["input_ids"]
ids[...] = rng.integers(1, vocab, ids.shape)
if "labels" in tensors:
    tensors["labels"][...] = ids
tensors["attention_mask"][...] = 1
if "start_positions" in tensors:
    seq_len = ids.shape[1]
    start = rng.integers(0, seq_len, ids.shape[0])
    tensors["start_positions"][...] = start
    tensors["end_positions"][...] = np.minimum(
        start + rng.integers(0, 16, ids.shape[0]), seq_len - 1)
save_file(tensors, sys.argv[1])
PY

peer() {
  $python "$root/bench/peer.py" "$config" --data "$work/data.safetensors" \
    --steps "$steps" --micro-batches $micro_batches ${PEER_ARGS:-} "$@" \
    2> "$work/peer.err" ||
    { tail -20 "$work/peer.err"; return 1; }
}
echo "== eager, load $(cut -d' ' -f1-3 /proc/loadavg)"
peer --mode eager --save-weights "$work/init.safetensors" | tee "$work/eager.log"
for mode in $torch_modes; do
  echo "== torch $mode, load $(cut -d' ' -f1-3 /proc/loadavg)"
  peer --mode "$mode" | tee "$work/torch-$mode.log" || true
done
for schedule in $schedules; do
  stashing=none
  [ "$schedule" = async ] && stashing=stash
  echo "== ftpipe-run $schedule, stashing $stashing, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$bin/ftpipe-run" "$work/art" --np 2 --data "$work/data.safetensors" \
    --weights "$work/init.safetensors" --steps "$steps" \
    --micro-batches $micro_batches --schedule "$schedule" \
    --stashing "$stashing" --optimizer adamw --lr 1e-3 --weight-decay 0.01 \
    --timeout 1200 --failure-timeout 600 > "$work/ftpipe-$schedule.log" 2>&1 ||
    tail -5 "$work/ftpipe-$schedule.log"
  grep -E '^step|memory:' "$work/ftpipe-$schedule.log" | cut -c1-160 || true
done

python3 - "$work" "$micro_batches" "$mbs" "$torch_modes" $schedules <<'PY'
import re, sys
work, micro_batches, mbs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch_modes, schedules = sys.argv[4].split(), sys.argv[5:]
samples = micro_batches * mbs
TOLERANCE = 1e-4
def parse(name):
    losses, step_times, rss, plan = [], {}, [], []
    try:
        lines = open(f"{work}/{name}.log").readlines()
    except OSError:
        lines = []
    for line in lines:
        m = re.match(r"step (\d+) loss ([0-9.]+) (?:seconds ([0-9.]+)|samples/s ([0-9.]+))", line)
        if m:
            step = int(m.group(1))
            if step == len(losses):
                losses.append(float(m.group(2)))
            if m.group(3):
                step_times[step] = float(m.group(3))
            elif float(m.group(4)) > 0:
                # ftpipe-run prints samples per second of the step.
                step_times[step] = samples / float(m.group(4))
        m = re.match(r"rank (\d+) peak resident ([0-9.]+) MiB", line)
        if m:
            rss.append(float(m.group(2)))
        m = re.match(r"device (\d+) memory: peak tensor ([0-9.]+) MiB.*peak resident ([0-9.]+) MiB.*; plan ([0-9.]+) MiB", line)
        if m:
            rss.append(float(m.group(3)))
            plan.append(f"{m.group(2)}/{m.group(4)}")
    last = step_times[max(step_times)] if step_times else float("nan")
    return losses, last, rss, plan
eager = parse("eager")
rows = [("PyTorch eager, 1 process", eager, False)]
rows += [(f"torch.distributed.pipelining {m}", parse(f"torch-{m}"), False) for m in torch_modes]
rows += [(f"ftpipe-run {s}" + (" (stashing)" if s == "async" else ""), parse(f"ftpipe-{s}"), s != "async")
         for s in schedules]
print("\n| run | last step s | speed-up over eager | peak resident MiB per process | ftpipe: peak tensor / plan MiB | losses | max rel. diff from eager |")
print("|---|---|---|---|---|---|---|")
failed = []
for name, (losses, last, rss, plan), checked in rows:
    diffs = [abs(a - b) / abs(b) for a, b in zip(losses, eager[0])]
    diff = max(diffs, default=float("nan"))
    if not losses or (checked and (len(losses) < len(eager[0]) or diff > TOLERANCE)):
        failed.append(name)
    print(f"| {name} | {last:.2f} | {eager[1] / last:.2f} | {', '.join(f'{r:.0f}' for r in sorted(rss))} | "
          f"{', '.join(plan) or '-'} | {', '.join(f'{l:.6f}' for l in losses)} | {diff:.1e} |")
if failed:
    print(f"\nFAILED: no losses, or more than {TOLERANCE:g} relative from eager's: {', '.join(failed)}")
    sys.exit(1)
print(f"\nnumerics: every synchronous ftpipe-run within {TOLERANCE:g} of eager's losses")
PY
