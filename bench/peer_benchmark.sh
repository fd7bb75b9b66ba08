#!/usr/bin/env bash
# peer_benchmark.sh [BUILD] [CONFIG] [STEPS] - ftpipe-run against PyTorch's
# own pipeline and PyTorch eager on one GPT-2 (issue 25; not a test).
#
# CONFIG (default bench/models/gpt2-124m.json): a Hugging Face GPT-2 config
# with FTPipe's micro-batch entry. Compiles it for 2 devices (wall and CPU
# time), writes PyTorch's initial weights (bench/peer_gpt2.py --save-weights)
# so that every run starts from the same weights, then trains STEPS (default
# 2) steps of 4 micro-batches of zeros with AdamW (lr 1e-3, weight decay
# 0.01), one thread per process: PyTorch eager in one process,
# torch.distributed.pipelining GPipe and 1F1B over 2 processes (gloo, blocks
# split evenly), and ftpipe-run on its own plan under GPipe and 1F1B. Prints
# one table: the last step's time, the speed-up over eager, each process's
# peak resident memory (ftpipe-run: also its plan's figure for tensor
# memory), and every step's loss with the largest relative difference from
# eager's. Runs from the reference environment (/work/venv-ref). The load
# average is printed: step times depend on it, memory and losses do not.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
config="${2:-$root/bench/models/gpt2-124m.json}"
steps="${3:-2}"
python="${PEER_PYTHON:-/work/venv-ref/bin/python}"
bin="$build/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "date $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
"$bin/ftpipe-model-gen" "$config" --loss --quiet -o "$work/model.mlir"
/usr/bin/time -f "%e %U %S" -o "$work/compile.time" \
  "$bin/ftpipe-compile" "$work/model.mlir" --devices=2 -o "$work/art" \
  2> "$work/compile.log"
read -r wall user sys < "$work/compile.time"
echo "ftpipe-compile --devices=2: wall $wall s, CPU $user s user + $sys s system"
python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/art" 64 \
  "$work/zeros.safetensors"
# PyTorch's runs attend to every token: the attention mask is ones here too
# (make-dataset.py's zeros would mask every position).
"$python" - "$work/zeros.safetensors" <<'PY'
import sys
from safetensors.numpy import load_file, save_file
tensors = load_file(sys.argv[1])
if "attention_mask" in tensors:
    tensors["attention_mask"][...] = 1
save_file(tensors, sys.argv[1])
PY

peer() {
  "$python" "$root/bench/peer_gpt2.py" "$config" --steps "$steps" "$@" \
    2> /dev/null
}
echo "== eager, load $(cut -d' ' -f1-3 /proc/loadavg)"
peer --mode eager --save-weights "$work/init.safetensors" | tee "$work/eager.log"
for mode in gpipe 1f1b; do
  echo "== torch $mode, load $(cut -d' ' -f1-3 /proc/loadavg)"
  peer --mode "$mode" | tee "$work/torch-$mode.log"
done
for schedule in gpipe 1f1b; do
  echo "== ftpipe-run $schedule, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$bin/ftpipe-run" "$work/art" --np 2 --data "$work/zeros.safetensors" \
    --weights "$work/init.safetensors" --steps "$steps" --micro-batches 4 \
    --schedule "$schedule" --optimizer adamw --lr 1e-3 --weight-decay 0.01 \
    --timeout 1200 --failure-timeout 600 > "$work/ftpipe-$schedule.log" 2>&1
  grep -E '^step|memory:' "$work/ftpipe-$schedule.log" | cut -c1-160
done

python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
def parse(name, ftpipe=False):
    losses, seconds, rss, plan = [], [], [], []
    step_times = {}
    for line in open(f"{work}/{name}.log"):
        m = re.match(r"step (\d+) loss ([0-9.]+) (?:seconds ([0-9.]+)|samples/s ([0-9.]+))", line)
        if m:
            step = int(m.group(1))
            if step == len(losses):
                losses.append(float(m.group(2)))
            if m.group(3):
                step_times[step] = float(m.group(3))
            elif float(m.group(4)) > 0:
                # ftpipe-run prints samples per second of the step.
                step_times[step] = 16 / float(m.group(4))
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
rows = [("PyTorch eager, 1 process", eager)]
rows += [(f"torch.distributed.pipelining {m}", parse(f"torch-{m}")) for m in ("gpipe", "1f1b")]
rows += [(f"ftpipe-run {s}", parse(f"ftpipe-{s}", True)) for s in ("gpipe", "1f1b")]
print("\n| run | last step s | speed-up over eager | peak resident MiB per process | ftpipe: peak tensor / plan MiB | losses | max rel. diff from eager |")
print("|---|---|---|---|---|---|---|")
for name, (losses, last, rss, plan) in rows:
    diff = max((abs(a - b) / abs(b) for a, b in zip(losses, eager[0])), default=float("nan"))
    print(f"| {name} | {last:.2f} | {eager[1] / last:.2f} | {', '.join(f'{r:.0f}' for r in sorted(rss))} | "
          f"{', '.join(plan) or '-'} | {', '.join(f'{l:.6f}' for l in losses)} | {diff:.1e} |")
PY
