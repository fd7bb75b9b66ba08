#!/usr/bin/env bash
# freezing.sh [BUILD] - freezing during fine-tuning (issue 32; not a test),
# printed in one run:
#
#  1. measured: a BERT with 8 layers (bench/models/bert-8-layers.json:
#     hidden 128, 4 heads, sequences of 64 tokens, micro-batches of 8) on a
#     synthetic question-answering task (bench/freezing_data.py: the answer
#     span is marked by two tokens), compiled by `ftpipe-compile
#     --devices=4` and trained on 4 MPI processes for EPOCHS epochs of
#     SAMPLES samples (1F1B, 4 micro-batches per step, Adam, lr 1e-3) three
#     times: without freezing; with `--freeze alpha=ALPHA --activation-cache
#     CACHE_MIB` (PipeTransformer's schedule: after epoch T, floor(8 (1 - (1
#     - ALPHA)^T)) layers frozen; no re-compile: the frozen prefix's stages
#     skip their backwards in the code compiled before and the cache replays
#     their outputs for samples seen before, kept as the prefix grows); and
#     with `--freeze alpha=ALPHA --freeze-recompile
#     --freeze-recompile-args=--replicas=REPACK` (each time the prefix grows
#     the run prices a re-compile against the steps left, and where it pays
#     compiles the model again with the prefix frozen in the background, the
#     planner choosing depth x replicas of the 4 devices with REPACK=auto,
#     and migrates to that plan). Per epoch: the frozen depth, the time (the
#     sum of process 0's step times) and the mean loss of each; then the
#     total time, the 4 processes' CPU time (/usr/bin/time per process: load
#     changes it far less than the wall time; the background compiles' own
#     apart), the final loss (the last epoch's mean), the speed-ups, the
#     cache's lines and the re-compile decisions and plans.
#  2. simulated: BERT-large (24 layers) on 8 x RTX 2080 Ti over PCIe
#     (ftpipe-opt's Mixed-Pipe with replicas=auto, the report's simulator,
#     1F1B, M = 8): per epoch of the same alpha schedule, the mini-batch time
#     of the plan made with the frozen prefix (the pure pipeline on 8
#     devices and the chosen depth x replicas), against no freezing.
#
# Measured times depend on the machine's load: the script prints `uptime`
# before each run; the simulated part does not. Environment: EPOCHS
# (default 6), SAMPLES (1024), ALPHA (0.3333), SIM_EPOCHS (6), REPACK (auto;
# none: the re-compiles keep 4 devices without replicas; W or r0,r1,...: that
# layout on the 4 processes, ftpipe-compile's --replicas), CACHE_MIB (1024).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${1:-$root/build}" && pwd)/bin"
epochs="${EPOCHS:-6}" samples="${SAMPLES:-1024}" alpha="${ALPHA:-0.3333}"
sim_epochs="${SIM_EPOCHS:-6}" repack="${REPACK:-auto}"
cache_mib="${CACHE_MIB:-1024}"
micro=4 batch=8
steps=$((epochs * samples / (micro * batch)))
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== measured: BERT, 8 layers, $epochs epochs of $samples samples, 4 MPI processes"
"$bin/ftpipe-model-gen" "$root/bench/models/bert-8-layers.json" --loss --quiet \
  -o "$work/model.mlir"
(cd "$work" && "$bin/ftpipe-compile" model.mlir --devices=4 -O1 \
  --schedule=1f1b --microbatches=$micro -o "$work/plan" 2> "$work/compile.log")
python3 "$root/bench/freezing_data.py" "$work/plan" "$samples" 1 "$work/data.st"
# Each process under /usr/bin/time: its CPU time (waits sleep, so this is
# the work done, the background compiles included), which the machine's load
# changes far less than the wall time.
run=(mpirun -np 4 --oversubscribe sh -c
     'exec /usr/bin/time -f "%U %S" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"'
     "$work/cpu.base" "$bin/ftpipe-run" "$work/plan" --data "$work/data.st"
     --seed 1 --steps "$steps" --micro-batches $micro --schedule 1f1b
     --lr 1e-3)
echo "no freezing: $(uptime)"
"${run[@]}" > "$work/base.log" 2>&1
echo "alpha=$alpha, skipped backwards and --activation-cache $cache_mib, no re-compile: $(uptime)"
run[7]="$work/cpu.cached"
"${run[@]}" --freeze "alpha=$alpha" --activation-cache "$cache_mib" \
  > "$work/cached.log" 2>&1
# timed_compiler NAME: writes $work/compile-NAME.sh, ftpipe-compile under
# /usr/bin/time adding each background compile's own CPU time to
# $work/cpu.compiles-NAME, to tell it from training's.
timed_compiler() {
  printf '#!/bin/sh\nexec /usr/bin/time -a -f "%%U %%S" -o "%s" "%s" "$@"\n' \
    "$work/cpu.compiles-$1" "$bin/ftpipe-compile" > "$work/compile-$1.sh"
  chmod +x "$work/compile-$1.sh"
}
echo "alpha=$alpha, --freeze-recompile (where it pays), re-packing replicas=$repack: $(uptime)"
run[7]="$work/cpu.frozen"
timed_compiler frozen
"${run[@]}" --freeze "alpha=$alpha" --freeze-recompile \
  --freeze-recompile-args="--replicas=$repack" \
  --replan-dir "$work/plans" --replan-compiler "$work/compile-frozen.sh" \
  > "$work/frozen.log" 2>&1
echo "after: $(uptime)"
python3 - "$work" "$epochs" "$samples" "$micro" "$batch" <<'PY'
import json, os, re, sys
work, epochs, samples, micro, batch = sys.argv[1], *map(int, sys.argv[2:])
per_step = micro * batch
steps_per_epoch = samples // per_step

def parse(path):
    steps, notes = {}, []
    for line in open(path):
        m = re.match(r"step (\d+) loss ([-0-9.e]+) samples/s ([0-9.e+]+)", line)
        if m:
            steps[int(m.group(1))] = (float(m.group(2)), per_step / float(m.group(3)))
        elif line.startswith(("freeze", "frozen", "migrated", "activation cache")) or "activation cache:" in line:
            notes.append(line.rstrip())
    return steps, notes

def stages(plan):
    manifest = json.load(open(os.path.join(plan, "manifest.json")))
    per_device = {}
    for stage in manifest["stages"]:
        per_device[stage["device"]] = per_device.get(stage["device"], 0) + 1
    frozen = sum(1 for p in manifest["parameters"].values() if p.get("frozen"))
    return ("stages per device " + "/".join(str(per_device.get(d, 0))
            for d in range(len(manifest["devices"]) if isinstance(manifest["devices"], list)
                           else manifest["devices"]))
            + ", %d frozen parameters, replicas %s" % (frozen, manifest.get("replicas", "none")))

base, _ = parse(os.path.join(work, "base.log"))
frozen, notes = parse(os.path.join(work, "frozen.log"))
cached, cache_notes = parse(os.path.join(work, "cached.log"))
depth_at = {}
for note in notes:
    m = re.match(r"freeze: from step (\d+), (\d+) of", note)
    if m:
        depth_at[int(m.group(1))] = int(m.group(2))
def depth(step):
    d = 0
    for s in sorted(depth_at):
        if s <= step:
            d = depth_at[s]
    return d
names = ("no freezing", "skip+cache", "re-compile")
print("%5s %6s %12s %12s %12s %12s %12s %12s" % ("epoch", "frozen", "time s", "time s", "time s", "loss", "loss", "loss"))
print("%5s %6s %12s %12s %12s %12s %12s %12s" % ("", "layers", *names, *names))
totals = [0.0, 0.0, 0.0]
runs = (base, cached, frozen)
for e in range(epochs):
    rows = range(e * steps_per_epoch, (e + 1) * steps_per_epoch)
    t = [sum(run[s][1] for s in rows if s in run) for run in runs]
    l = [sum(run[s][0] for s in rows if s in run) / len(rows) for run in runs]
    totals = [a + b for a, b in zip(totals, t)]
    print("%5d %6d %12.2f %12.2f %12.2f %12.4f %12.4f %12.4f" % (e, depth(e * steps_per_epoch), *t, *l))
print("total time (process 0's steps): no freezing %.2f s; skipped backwards + cache %.2f s: %.2fx less; "
      "with re-compiles %.2f s: %.2fx less" % (
          totals[0], totals[1], totals[0] / totals[1], totals[2], totals[0] / totals[2]))
def cpu(name):
    return sum(sum(map(float, open(os.path.join(work, "%s.%d" % (name, r))).read().split()[:2]))
               for r in range(4))
def compile_cpu(name):
    path = os.path.join(work, "cpu.compiles-" + name)
    return [sum(map(float, line.split()[:2])) for line in open(path)
            if line.strip()] if os.path.exists(path) else []
base_cpu, cached_cpu, frozen_cpu = cpu("cpu.base"), cpu("cpu.cached"), cpu("cpu.frozen")
compiles = compile_cpu("frozen")
print("CPU time of the 4 processes (user + system): no freezing %.1f s; skipped backwards + cache %.1f s: "
      "%.2fx less; with re-compiles %.1f s: %.2fx less, of it the %d background compiles %.1f s "
      "(training alone %.1f s, %.2fx less)" % (
          base_cpu, cached_cpu, base_cpu / cached_cpu, frozen_cpu, base_cpu / frozen_cpu,
          len(compiles), sum(compiles), frozen_cpu - sum(compiles),
          base_cpu / (frozen_cpu - sum(compiles))))
def final(run):
    return sum(run[s][0] for s in range((epochs - 1) * steps_per_epoch, epochs * steps_per_epoch)) / steps_per_epoch
print("final loss (last epoch's mean): no freezing %.4f, skipped backwards + cache %.4f, with re-compiles %.4f" % (
    final(base), final(cached), final(frozen)))
for note in cache_notes:
    if "activation cache" in note or note.startswith("frozen backwards"):
        print("  " + note)
print("plans: the first: " + stages(os.path.join(work, "plan")))
for note in notes:
    if note.startswith(("freeze re-compile", "freeze: not compiling", "migrated")):
        print("  " + re.sub(r"/tmp/tmp\.[A-Za-z0-9]+/", "", note))
plans = os.path.join(work, "plans")
for name in sorted(os.listdir(plans)) if os.path.isdir(plans) else []:
    if os.path.exists(os.path.join(plans, name, "manifest.json")):
        print("  %s: %s" % (name, stages(os.path.join(plans, name))))
PY

echo "== simulated: BERT-large on 8 x RTX 2080 Ti (PCIe), 1F1B, M = 8, alpha=$alpha"
"$bin/ftpipe-model-gen" bert-large-uncased --loss --quiet -o "$work/large.mlir"
printf "%5s %6s %22s %30s %8s\n" epoch frozen "pipeline 8 x 1 ms" "chosen depth x replicas: ms" "vs none"
none=""
for ((e = 0; e < sim_epochs; e++)); do
  depth=$(python3 -c "import math; print(min(24, math.floor(24 * (1 - (1 - $alpha) ** $e) + 1e-9)))")
  freeze=()
  if ((depth > 0)); then
    layers=$(seq -s '|' 0 $((depth - 1)))
    freeze=(--ftpipe-freeze-params="regex=^bert\\.(embeddings|encoder\\.layer\\.($layers))\\.")
  fi
  "$bin/ftpipe-opt" "$work/large.mlir" -o /dev/null "${freeze[@]}" \
    --ftpipe-annotate-costs=hardware=rtx2080ti-pcie-x8 \
    --ftpipe-mixed-pipe="devices=8 replicas=auto verbose=true schedule=1f1b microbatches=8" \
    2> "$work/sim.log" || true
  python3 - "$work/sim.log" "$e" "$depth" "$none" <<'PY'
import re, sys
log, epoch, depth, none = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
# "depth  8, replicas 1: simulated 7.076 ms per mini-batch, ..." (replicas
# per stage, or one factor; a one-stage device may be "(cut in N)").
rows = re.findall(r"depth +(\d+), replicas ([\d,]+)(?: \(cut in \d+\))?: simulated ([\d.]+) ms per mini-batch.*?(<- chosen)?$",
                  open(log).read(), re.M)
pure = next(float(ms) for d, w, ms, c in rows if w == "1")
chosen = next((d, w, float(ms)) for d, w, ms, c in rows if c)
ratio = "" if not none else "%.2fx" % (float(none) / chosen[2])
print("%5d %6d %22.1f %21s: %7.1f %8s" % (epoch, depth, pure, "%s x %s" % chosen[:2], chosen[2], ratio))
open(log + ".chosen", "w").write(str(chosen[2]))
PY
  if [[ -z "$none" ]]; then none=$(cat "$work/sim.log.chosen"); fi
  cat "$work/sim.log.chosen" >> "$work/sim.chosen"; echo >> "$work/sim.chosen"
done
if [[ -s "$work/sim.chosen" ]]; then python3 -c "import sys; t = [float(x) for x in open(sys.argv[1]).read().split()]; print('over %d epochs of as many mini-batches: %.1f ms per mini-batch on average against %.1f without freezing: %.2fx less time' % (len(t), sum(t) / len(t), t[0], t[0] * len(t) / sum(t)))" "$work/sim.chosen"; fi
