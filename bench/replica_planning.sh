#!/usr/bin/env bash
# replica_planning.sh [BUILD [SCHEDULE]] - the planner's choice of pipeline
# depth x data-parallel replicas for the paper's models (issue 28; simulated,
# not a test: nothing here depends on the machine's load).
#
# For BERT-large, GPT2-XL, T5-3B, LLaMA-2-7B and Flan-T5-XL (ftpipe-model-gen
# with its defaults and the loss), on 8 devices of the RTX 2080 Ti and V100
# presets and on 16 devices as two 8-GPU nodes of the same GPUs (a cluster
# JSON on the preset: its intra-node links and its network between the
# nodes), runs `ftpipe-mixed-pipe replicas=auto` under SCHEDULE (default
# 1f1b; M = 8) and prints one row per model and hardware: the pure
# pipeline's simulated mini-batch (depth P, every device once) and
# objective, the best replicated option's (depth and each device's replicas:
# "4" for all, "1,2,1" per device), their ratio, and the chosen option.
# "-" where no option of that kind fits in memory. Then the chain bound
# (include/FTPipe/Partition/ReplicaBound.h: compute only, transfers and
# all-reduces free, stages balanced at will, depth at least what the
# weights' state needs): the pure pipeline's simulated mini-batch over the
# bound of the best replicated layout (the most any chain of replicas could
# gain over today's plan), that layout, and the
# figures that price replication: the model's gradient GiB, their ring
# all-reduce over 2 devices, and the compute of a mini-batch (C x M). The last
# two columns: Seq-Pipe's pure pipeline (contiguous stages, one a device;
# ftpipe-report's simulated GPipe or 1F1B mini-batch, "-" where it does not
# fit or the schedule is another), and the best pure pipeline of the two
# over the best replicated option: the issue's best against best.
# The chain bound holds for chains only; the gain bound column holds for
# every plan (ReplicaBound.h's step bound, docs/Replicas.md "A bound on any
# replicated plan"): the pure pipeline's simulated mini-batch over the
# lowest step bound of a layout with a replica, so no replicated plan the
# simulator scores gains more than it; "1.3x out of reach" when it is
# under 1.3.
# SPLIT=K (default 1) plans the global batch of 8 micro-batches as 8 x K
# micro-batches of 1/K the sequences each: the model generated with
# --micro-batch-size b/K (b its config's; a model whose b K does not divide
# is left out) and M = 8 x K, so the cost model prices the smaller
# micro-batch from its own shapes (launches and weight reads do not shrink
# with it). MODELS="a b" plans only those models. AUTO=1 also runs
# `ftpipe-auto-partition replicas=auto` (one choice over the searches with
# Seq-Pipe dp, Seq-Pipe greedy and Mixed-Pipe's plans,
# lib/Partition/ReplicaChoice.h) and gives its choice in the last column.
# After the table, for each row under 1.3x, why: the shallowest depth that
# fits, what w identical balanced pipelines at a depth from there would gain
# on the pure pipeline without transfers (an estimate, in units of C, one
# micro-batch's compute), the pure pipeline's simulated mini-batch in C, the
# chosen option's plan bound (no list of its plan on its layout is faster,
# transfers and all-reduces free: schedule::stepLowerBound) with the device
# that sets it and that device's work, the highest step bound of a layout
# tried (below the chosen time: the bound cannot rule out any layout), and
# per depth the fastest option (simulated ms, idle share of the processes)
# and the layouts refused, with the reason (memory: "does not fit"). The options'
# logs stay in $LOGS when it is set.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
schedule="${2:-1f1b}"
bin="$build/bin"
bench_work
logs="${LOGS:-$work/logs}"
mkdir -p "$logs"
why="$work/why.md"
: > "$why"

# Two nodes of 8 preset GPUs (the values of lib/Partition/Hardware.cpp's
# presets: sustained TFLOP/s and GB/s, 5 us launches).
two_nodes() { # NAME BASE DEVICE MEMORY TFLOPS GBPS
  cat > "$work/$1.json" <<JSON
{"name": "$1", "base": "$2",
 "devices": [
  {"name": "$3-a", "count": 8, "memory_bytes": $4, "tflops": $5, "mem_gbps": $6, "launch_us": 5, "node": 0},
  {"name": "$3-b", "count": 8, "memory_bytes": $4, "tflops": $5, "mem_gbps": $6, "launch_us": 5, "node": 1}]}
JSON
}
two_nodes rtx2080ti-x16 rtx2080ti-pcie-x8 RTX2080Ti 11811160064 9.415 492.8
two_nodes v100-x16 v100-nvlink-x8 V100 17179869184 10.99 720

split="${SPLIT:-1}"
if ! [[ "$split" =~ ^[1-9][0-9]{0,2}$ ]]; then
  echo "replica_planning.sh: SPLIT must be a whole number from 1 to 999, not '$split'" >&2
  exit 2
fi
micro=$((8 * split))
echo "replica planning, schedule $schedule, M = $micro (split $split), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(load)"
echo "| model | hardware | devices | pure pipeline ms (objective ms/mb) | best replicated depth, replicas: ms (objective ms/mb) | pure / replicated | chosen depth, replicas | bound: pure / best replicated chain (layout) | gain bound: pure / any replicated plan (layout) | gradients GiB, all-reduce over 2 ms, compute ms per mini-batch | planning s | Seq-Pipe pure ms | best pure / best replicated | over every partitioner (AUTO=1): method depth, replicas: ms (planning s) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for model in ${MODELS:-bert-large-uncased gpt2-xl t5-3b llama-2-7b flan-t5-xl}; do
  batch=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ftpipe"]["micro_batch_size"])' \
    "$root/models/$model.json")
  if (( batch % split )); then
    echo "| $model | - | - | micro-batch of $batch not split in $split | | | | | | | | | | |"
    continue
  fi
  "$bin/ftpipe-model-gen" "$model" --loss --quiet \
    --micro-batch-size $((batch / split)) -o "$work/model.mlir"
  for hw in rtx2080ti-pcie-x8:8 v100-nvlink-x8:8 "$work/rtx2080ti-x16.json":16 \
            "$work/v100-x16.json":16; do
    hardware="${hw%:*}" devices="${hw##*:}"
    log="$logs/$model-$(basename "$hardware" .json)-$devices-split$split.log"
    start=$(date +%s.%N)
    "$bin/ftpipe-opt" "$work/model.mlir" -o /dev/null \
      --ftpipe-annotate-costs="hardware=$hardware" \
      --ftpipe-mixed-pipe="devices=$devices replicas=auto verbose=true schedule=$schedule microbatches=$micro" \
      2> "$log" || true
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    # The best unreplicated plan is not always Mixed-Pipe's: Seq-Pipe's
    # contiguous stages, one a device, scored by ftpipe-report.
    "$bin/ftpipe-opt" "$work/model.mlir" -o /dev/null \
      --ftpipe-annotate-costs="hardware=$hardware" \
      --ftpipe-seq-pipe="devices=$devices schedule=$schedule microbatches=$micro" \
      --ftpipe-report="schedule=$schedule microbatches=$micro" \
      > "$log.seq-pipe" 2>&1 || true
    # AUTO=1: the choice over every partitioner's searches
    # (ftpipe-auto-partition replicas=auto, lib/Partition/ReplicaChoice.h).
    : > "$log.auto"
    if [[ "${AUTO:-0}" == 1 ]]; then
      auto_start=$(date +%s.%N)
      "$bin/ftpipe-opt" "$work/model.mlir" -o /dev/null \
        --ftpipe-annotate-costs="hardware=$hardware" \
        --ftpipe-auto-partition="devices=$devices replicas=auto schedule=$schedule microbatches=$micro" \
        2> "$log.auto" || true
      echo "planning s $(echo "$(date +%s.%N) - $auto_start" | bc)" >> "$log.auto"
    fi
    python3 - "$log" "$model" "$(basename "$hardware" .json)" "$devices" "$seconds" "$why" "$micro" "$schedule" <<'PY'
import re, sys
log, model, hw, devices, seconds, why, micro, schedule = sys.argv[1:]
micro = int(micro)
line = re.compile(r"depth +(\d+), replicas ([\d,]+(?: uneven(?: 1/\d+)?)?(?: \(cut in \d+(?:, every device)?\))?): (?:simulated ([\d.]+) ms per mini-batch"
                  r".*idle ([\d.]+)%.*objective ([\d.]+) ms per micro-batch|infeasible: (.*))")
bound = re.compile(r"bound \(chain, compute only\): pure pipeline ([\d.]+) ms per mini-batch, "
                   r"replicated (?:([\d.]+) ms \(depth \d+, replicas ([\d,]+)\)|- \(none fits\)); "
                   r"compute ([\d.]+) ms per micro-batch, at least \d+ devices, gradients ([\d.]+) GiB, "
                   r"all-reduce over 2 ([\d.]+) ms")
any_plan = re.compile(r"bound \(any plan\): replicated ([\d.]+) ms \(depth \d+, replicas ([\d,]+)\)")
highest = re.compile(r"at most ([\d.]+) ms for a layout tried")
plan_bound = re.compile(r"bound \(this plan\) ([\d.]+) ms \(device (\d+) busy ([\d.]+) ms\)")
pure = best = chosen = bounds = step = None
layouts_at_most = chosen_bound = None
fastest, refused = {}, {}  # per depth: the fastest option; refused layouts
for text in open(log):
    a = any_plan.search(text)
    if a:
        step = a.groups()
        h = highest.search(text)
        layouts_at_most = float(h.group(1)) if h else None
        continue
    b = bound.search(text)
    if b:
        bounds = b.groups()
        continue
    m = line.search(text)
    if not m:
        continue
    depth, replicas = int(m.group(1)), m.group(2)
    if "<- chosen" in text:
        chosen = f"{depth}, {replicas}"
        pb = plan_bound.search(text)
        if pb and m.group(3):
            chosen_bound = (float(m.group(3)), float(pb.group(1)), pb.group(2), float(pb.group(3)))
    if m.group(3) is None:
        reason = m.group(6).strip()
        reason = "does not fit" if "fit" in reason else reason[:60]
        refused.setdefault(depth, []).append(f"{replicas} ({reason})")
        continue
    option = (float(m.group(3)), float(m.group(5)), depth, replicas)
    if depth not in fastest or option[0] < fastest[depth][0]:
        fastest[depth] = (option[0], float(m.group(4)), replicas)
    if replicas == "1":
        pure = option
    elif best is None or option[0] < best[0]:
        best = option
if chosen is None:
    errors = [t.strip() for t in open(log) if "error" in t]
    chosen = "no plan" + (f" ({errors[0][:80]})" if errors else "")
cell = lambda o: "-" if o is None else f"{o[0]:.1f} ({o[1]:.2f})"
best_cell = "-" if best is None else f"{best[2]}, {best[3]}: {cell(best)}"
ratio = f"{pure[0] / best[0]:.2f}" if pure and best else "-"
bound_cell = prices = gain_cell = "-"
if step and pure:
    gain = pure[0] / float(step[0])
    gain_cell = f"{gain:.2f} ({step[1]})" + (", 1.3x out of reach" if gain < 1.3 else "")
if bounds and bounds[1] and pure:
    bound_cell = f"{pure[0] / float(bounds[1]):.2f} ({bounds[2]})"
if bounds:
    prices = f"{float(bounds[4]):.2f}, {float(bounds[5]):.1f}, {micro * float(bounds[3]):.1f}"
# Seq-Pipe's pure pipeline under the same schedule (the report simulates
# GPipe and 1F1B), where it fits.
label = {"1f1b": "1F1B", "gpipe": "GPipe"}.get(schedule)
seq = None
seq_text = open(log + ".seq-pipe").read()
seq_match = label and re.search(label + r" per mini-batch +: ([\d.]+) ms", seq_text)
if seq_match and "fits on every device" in seq_text:
    seq = float(seq_match.group(1))
best_pure = min([x for x in (pure[0] if pure else None, seq) if x is not None], default=None)
seq_cell = "-" if seq is None else f"{seq:.1f}"
vs_best = f"{best_pure / best[0]:.2f}" if best_pure and best else "-"
# The choice over every partitioner (AUTO=1): its method, option and
# simulated mini-batch, and its planning time.
auto_cell = "-"
auto_text = open(log + ".auto").read()
auto_match = re.search(r"chosen: (\S+) +([\d.]+) ms \(depth (\d+), replicas ([^)]*\)?)\)", auto_text)
auto_seconds = re.search(r"planning s ([\d.]+)", auto_text)
if auto_match:
    auto_cell = (f"{auto_match.group(1)} {auto_match.group(3)}, {auto_match.group(4)}: "
                 f"{float(auto_match.group(2)):.1f}"
                 + (f" ({float(auto_seconds.group(1)):.1f} s)" if auto_seconds else ""))
elif auto_seconds:
    errors = [t.strip() for t in auto_text.splitlines() if "error" in t]
    auto_cell = "no plan" + (f" ({errors[0][:80]})" if errors else "")
print(f"| {model} | {hw} | {devices} | {cell(pure)} | {best_cell} | {ratio} | {chosen} | {bound_cell} | {gain_cell} | {prices} | {float(seconds):.1f} | {seq_cell} | {vs_best} | {auto_cell} |")
if pure and (not best or pure[0] / best[0] < 1.3):
    # Balanced 1F1B without transfers or all-reduces, in units of C (one
    # micro-batch's compute): w = P / d identical pipelines of depth d take
    # (ceil(M / w) + d - 1) / d, the pure pipeline (M + P - 1) / P; the best
    # d that divides P and is no shallower than the shallowest option that
    # fits. An estimate of what whole replica pipelines buy when stages are
    # even, not a bound (uneven cuts beat it by a few %, per-device replicas
    # are left out).
    p = int(devices)
    shallowest = min(fastest)
    ideals = [((-(-micro // (p // d)) + d - 1) / d, d) for d in range(shallowest, p + 1) if p % d == 0]
    replicated_ideal, d = min(ideals)
    pure_ideal = (micro + p - 1) / p
    ideal = (f"shallowest that fits {shallowest}; balanced, free transfers: {p // d} x {d} "
             f"{replicated_ideal:.3f} C against the pure {pure_ideal:.3f} C, {pure_ideal / replicated_ideal:.2f}x; "
             f"the pure pipeline simulates {pure[0] / float(bounds[3]):.3f} C" if bounds else "")
    depths = sorted(set(fastest) | set(refused), reverse=True)
    parts = []
    for d in depths:
        text = f"{d}: "
        if d in fastest:
            ms, idle, replicas = fastest[d]
            text += f"{replicas} {ms:.1f} ms, idle {idle:.0f} %"
        if d in refused:
            text += ("; " if d in fastest else "") + "refused " + ", ".join(refused[d])
        parts.append(text)
    limits = ""
    if chosen_bound:
        limits = (f"; chosen {chosen_bound[0]:.1f} ms, its plan's bound (any list, transfers and all-reduces free) "
                  f"{chosen_bound[1]:.1f} ms (device {chosen_bound[2]} busy {chosen_bound[3]:.1f} ms)")
    if layouts_at_most:
        limits += f"; step bound of the layouts tried at most {layouts_at_most:.1f} ms"
    with open(why, "a") as out:
        out.write(f"- {model} on {hw} ({devices}): {ideal}{limits}. " + " / ".join(parts) + "\n")
PY
  done
done
echo
echo "rows under 1.3x: the shallowest depth that fits and what balanced whole replica pipelines would gain there"
echo "(C: one micro-batch's compute); per depth the fastest option that fits (simulated, idle share) and the layouts refused"
cat "$why"
