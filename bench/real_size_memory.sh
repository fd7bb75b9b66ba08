#!/usr/bin/env bash
# real_size_memory.sh [BUILD] [STEPS] [WORK] - GPT-2 124M memory, measured
# against predicted (not a test; issue 25). WORK, when given, is kept, and
# the artifacts found there are not compiled again.
#
# Compiles GPT-2 124M (bench/models/gpt2-124m.json: n_embd 768, 12 layers,
# vocabulary 50257, micro-batch 4 x 128) for 2 devices with and without
# recomputation, records each compile's wall and CPU time, then trains
# STEPS (default 2) steps of 4 micro-batches with AdamW on 2 MPI processes
# under GPipe, 1F1B, async with stashing and with 2BW, and zb-h1, and prints
# one table (RECOMPUTE, default "true false", and SETUPS, default "gpipe,none
# 1f1b,none async,stash async,2bw zb-h1,none", pick and order the runs:
# schedule,stashing): per device, the peak tensor memory, ftpipe-run's prediction
# from the action list, their ratio, the plan's figure (manifest.json's
# `device_memory` for the run's setup, the bound ftpipe-run refuses
# over-budget runs by) and the
# measured / plan ratio, the peak resident memory and the fixed overhead. The
# load average is printed before each run; the memory figures do not depend
# on it, the times do.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
steps="${2:-2}"
bin="$build/bin"
bench_work "${3:-}"

"$bin/ftpipe-model-gen" "$root/bench/models/gpt2-124m.json" --loss --quiet \
  -o "$work/gpt2.mlir"
for recompute in true false; do
  [ -f "$work/rc-$recompute/manifest.json" ] && continue
  echo "== compile, recompute=$recompute, load $(load)"
  /usr/bin/time -f "ftpipe-compile: wall %e s, CPU %U s user + %S s system" \
    "$bin/ftpipe-compile" "$work/gpt2.mlir" --devices=2 \
    --recompute=$recompute -o "$work/rc-$recompute" 2>&1 |
    grep -E "emit object|lower to LLVM|ftpipe-compile: wall"
done
python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/rc-true" 16 \
  "$work/zeros.safetensors"

printf '\n| recompute | schedule | device | peak tensor MiB | predicted MiB | measured / predicted | plan MiB | measured / plan | peak resident MiB | fixed overhead MiB |\n|---|---|---|---|---|---|---|---|---|---|\n' > "$work/table.md"
for recompute in ${RECOMPUTE:-true false}; do
  for setup in ${SETUPS:-gpipe,none 1f1b,none async,stash async,2bw zb-h1,none}; do
    set -- ${setup/,/ }
    echo "== run, recompute=$recompute, $1 $2, load $(load)"
    "$bin/ftpipe-run" "$work/rc-$recompute" --np 2 \
      --data "$work/zeros.safetensors" --steps "$steps" --micro-batches 4 \
      --schedule "$1" --stashing "$2" --timeout 1200 --failure-timeout 600 \
      2> "$work/run.log" | grep '^step'
    cp "$work/run.log" "$work/run-$recompute-$1$2.log"
    python3 - "$work/run.log" "$recompute" "$1${2/none/}" >> "$work/table.md" <<'PY'
import re, sys
log, recompute, schedule = sys.argv[1:]
pattern = re.compile(r"^device (\d+) memory: peak tensor ([0-9.]+) MiB \(predicted ([0-9.]+) MiB, measured / predicted ([0-9.]+)\).*peak resident ([0-9.]+) MiB, fixed overhead ([0-9.]+) MiB(?: \([0-9.]+ before the first step\))?; plan ([0-9.]+) MiB, measured / plan ([0-9.]+)")
for line in sorted(open(log)):
    m = pattern.match(line)
    if m:
        d, peak, pred, ratio, rss, fixed, plan, planRatio = m.groups()
        print(f"| {recompute} | {schedule} | {d} | {peak} | {pred} | {ratio} | {plan} | {planRatio} | {rss} | {fixed} |")
PY
  done
done
cat "$work/table.md"
