#!/usr/bin/env bash
# replica_planning.sh [BUILD [SCHEDULE]] - the planner's choice of pipeline
# depth x data-parallel replicas for the paper's models (issue 28; simulated,
# not a test: nothing here depends on the machine's load).
#
# For BERT-large, GPT2-XL, T5-3B, LLaMA-2-7B and Flan-T5-XL (ftpipe-model-gen
# with its defaults and the loss), on 8 devices of the RTX 2080 Ti and V100
# presets and on 16 devices as two 8-GPU nodes of the same GPUs (a cluster
# JSON on the preset: its intra-node links and its network between the
# nodes), runs one search per model and hardware:
# `ftpipe-auto-partition replicas=auto verbose=true` under SCHEDULE
# (default 1f1b; M = 8), the depth x replicas search with the plans of
# Seq-Pipe dp (where the graph is small enough), Seq-Pipe greedy and
# Mixed-Pipe and one choice over all of them (lib/Partition/ReplicaChoice.h;
# before session 13 Mixed-Pipe's search ran twice a row, in
# `ftpipe-mixed-pipe replicas=auto` and, with AUTO=1, again in
# ftpipe-auto-partition, and Seq-Pipe dp's pure plan a third time in
# ftpipe-seq-pipe). One row per model and hardware: Mixed-Pipe's pure
# pipeline's simulated mini-batch (depth P, every device once) and
# objective, its best replicated option's (depth and each device's replicas:
# "4" for all, "1,2,1" per device), their ratio, and Mixed-Pipe's own choice
# (its search's, as `ftpipe-mixed-pipe replicas=auto` makes it).
# "-" where no option of that kind fits in memory. Then the chain bound
# (include/FTPipe/Partition/ReplicaBound.h: compute only, transfers and
# all-reduces free, stages balanced at will, depth at least what the
# weights' state needs): the pure pipeline's simulated mini-batch over the
# bound of the best replicated layout (the most any chain of replicas could
# gain over today's plan), that layout, and the
# figures that price replication: the model's gradient GiB, their ring
# all-reduce over 2 devices, and the compute of a mini-batch (C x M).
# The chain bound holds for chains only; the gain bound column holds for
# every plan (ReplicaBound.h's step bound, docs/Replicas.md "A bound on any
# replicated plan"): the pure pipeline's simulated mini-batch over the
# lowest step bound of a layout with a replica, so no replicated plan the
# simulator scores gains more than it; "1.3x out of reach" when it is
# under 1.3. Then best against best over every partitioner's search: the
# fastest feasible pure pipeline (today's plan: what ftpipe-auto-partition
# without replicas chooses from the same plans) and the fastest feasible
# option with replicas, each with its partitioner, their ratio, the option
# chosen over all of them, and the issue's check that no plan is slower
# than today's: best pure / chosen (at least 1.00 on every row; "-" where
# nothing fits).
# SPLIT=K (default 1) plans the global batch of 8 micro-batches as 8 x K
# micro-batches of 1/K the sequences each: the model generated with
# --micro-batch-size b/K (b its config's; a model whose b K does not divide
# is left out) and M = 8 x K, so the cost model prices the smaller
# micro-batch from its own shapes (launches and weight reads do not shrink
# with it). MODELS="a b" plans only those models. The planning seconds are
# the one search's (every partitioner's), wall time under the machine's load.
# After the table, for each row under 1.3x, why: the shallowest depth that
# fits, what w identical balanced pipelines at a depth from there would gain
# on the pure pipeline without transfers (an estimate, in units of C, one
# micro-batch's compute), the pure pipeline's simulated mini-batch in C, the
# chosen option's plan bound (no list of its plan on its layout is faster,
# transfers and all-reduces free: schedule::stepLowerBound) with the device
# that sets it and that device's work, the highest step bound of a layout
# tried (below the chosen time: the bound cannot rule out any layout), and
# per depth Mixed-Pipe's fastest option (simulated ms, idle share of the
# processes) and the layouts refused, with the reason (memory: "does not
# fit"). The search's log stays in $LOGS when it is set.
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
echo "| model | hardware | devices | Mixed-Pipe pure ms (objective ms/mb) | Mixed-Pipe best replicated depth, replicas: ms (objective ms/mb) | pure / replicated | Mixed-Pipe's choice depth, replicas | bound: pure / best replicated chain (layout) | gain bound: pure / any replicated plan (layout) | gradients GiB, all-reduce over 2 ms, compute ms per mini-batch | planning s (every partitioner) | best pure ms (partitioner) | best replicated ms (partitioner: depth, replicas) | best pure / best replicated | chosen over every partitioner: method depth, replicas: ms | best pure / chosen (>= 1.00: no slower than today's) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for model in ${MODELS:-bert-large-uncased gpt2-xl t5-3b llama-2-7b flan-t5-xl}; do
  batch=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ftpipe"]["micro_batch_size"])' \
    "$root/models/$model.json")
  if (( batch % split )); then
    echo "| $model | - | - | micro-batch of $batch not split in $split | | | | | | | | | | | | |"
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
      --ftpipe-auto-partition="devices=$devices replicas=auto verbose=true schedule=$schedule microbatches=$micro" \
      2> "$log" || true
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
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
chosen_line = re.compile(r"^  chosen: (\S+) +([\d.]+) ms \(depth (\d+), replicas (.*?)\)(?: step [\d.]+ ms)?$")
section = re.compile(r"^options of (\S+):")
# Per partitioner's search ("options of METHOD:" sections of the one run):
# its pure pipeline, its fastest replicated option and its own choice;
# Mixed-Pipe's bounds, fastest option per depth and refused layouts.
searches = {}
method = None
bounds = step = layouts_at_most = chosen_bound = overall = None
fastest, refused = {}, {}  # Mixed-Pipe's, per depth
text_lines = open(log).read().splitlines()
for text in text_lines:
    c = chosen_line.search(text)
    if c and method is None:
        overall = (c.group(1), float(c.group(2)), int(c.group(3)), c.group(4))
        continue
    sec = section.search(text)
    if sec:
        method = sec.group(1)
        searches[method] = {"pure": None, "best": None, "own": None}
        continue
    if method is None:
        continue
    mixed = method == "mixed-pipe"
    a = any_plan.search(text)
    if a:
        if mixed:
            step = a.groups()
            h = highest.search(text)
            layouts_at_most = float(h.group(1)) if h else None
        continue
    b = bound.search(text)
    if b:
        if mixed:
            bounds = b.groups()
        continue
    m = line.search(text)
    if not m:
        continue
    depth, replicas = int(m.group(1)), m.group(2)
    if "<- chosen" in text:
        pb = plan_bound.search(text)
        if pb and m.group(3):
            chosen_bound = (float(m.group(3)), float(pb.group(1)), pb.group(2), float(pb.group(3)))
    if m.group(3) is None:
        if mixed:
            reason = m.group(6).strip()
            reason = "does not fit" if "fit" in reason else reason[:60]
            refused.setdefault(depth, []).append(f"{replicas} ({reason})")
        continue
    option = (float(m.group(3)), float(m.group(5)), depth, replicas)
    search = searches[method]
    if "<- chosen" in text or "<- its search's choice" in text:
        search["own"] = option
    if mixed and (depth not in fastest or option[0] < fastest[depth][0]):
        fastest[depth] = (option[0], float(m.group(4)), replicas)
    if replicas == "1":
        search["pure"] = option
    elif search["best"] is None or option[0] < search["best"][0]:
        search["best"] = option
mixed = searches.get("mixed-pipe", {"pure": None, "best": None, "own": None})
pure, best = mixed["pure"], mixed["best"]
cell = lambda o: "-" if o is None else f"{o[0]:.1f} ({o[1]:.2f})"
best_cell = "-" if best is None else f"{best[2]}, {best[3]}: {cell(best)}"
ratio = f"{pure[0] / best[0]:.2f}" if pure and best else "-"
own = mixed["own"]
own_cell = "-" if own is None else f"{own[2]}, {own[3]}: {own[0]:.1f}"
if overall is None:
    errors = [t.strip() for t in text_lines if "error" in t]
    own_cell = "no plan" + (f" ({errors[0][:80]})" if errors else "")
bound_cell = prices = gain_cell = "-"
if step and pure:
    gain = pure[0] / float(step[0])
    gain_cell = f"{gain:.2f} ({step[1]})" + (", 1.3x out of reach" if gain < 1.3 else "")
if bounds and bounds[1] and pure:
    bound_cell = f"{pure[0] / float(bounds[1]):.2f} ({bounds[2]})"
if bounds:
    prices = f"{float(bounds[4]):.2f}, {float(bounds[5]):.1f}, {micro * float(bounds[3]):.1f}"
# Best against best over every partitioner (ties keep the earlier search,
# as the choice does).
def fastest_of(kind):
    found = None
    for name, search in searches.items():
        if search[kind] is not None and (found is None or search[kind][0] < found[1][0]):
            found = (name, search[kind])
    return found
best_pure, best_replicated = fastest_of("pure"), fastest_of("best")
pure_all = "-" if best_pure is None else f"{best_pure[1][0]:.1f} ({best_pure[0]})"
replicated_all = ("-" if best_replicated is None else
                  f"{best_replicated[1][0]:.1f} ({best_replicated[0]}: {best_replicated[1][2]}, {best_replicated[1][3]})")
vs_best = f"{best_pure[1][0] / best_replicated[1][0]:.2f}" if best_pure and best_replicated else "-"
overall_cell = "-" if overall is None else f"{overall[0]} {overall[2]}, {overall[3]}: {overall[1]:.1f}"
no_slower = f"{best_pure[1][0] / overall[1]:.2f}" if best_pure and overall else "-"
print(f"| {model} | {hw} | {devices} | {cell(pure)} | {best_cell} | {ratio} | {own_cell} | {bound_cell} | {gain_cell} | {prices} | {float(seconds):.1f} | {pure_all} | {replicated_all} | {vs_best} | {overall_cell} | {no_slower} |")
if pure and fastest and (not best or pure[0] / best[0] < 1.3):
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
