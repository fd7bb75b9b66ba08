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
# all-reduce over 2 devices, and the compute of a mini-batch (C x M).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
schedule="${2:-1f1b}"
bin="$build/bin"
bench_work

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

echo "replica planning, schedule $schedule, M = 8, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| model | hardware | devices | pure pipeline ms (objective ms/mb) | best replicated depth, replicas: ms (objective ms/mb) | pure / replicated | chosen depth, replicas | bound: pure / best replicated chain (layout) | gradients GiB, all-reduce over 2 ms, compute ms per mini-batch | planning s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for model in bert-large-uncased gpt2-xl t5-3b llama-2-7b flan-t5-xl; do
  "$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$work/model.mlir"
  for hw in rtx2080ti-pcie-x8:8 v100-nvlink-x8:8 "$work/rtx2080ti-x16.json":16 \
            "$work/v100-x16.json":16; do
    hardware="${hw%:*}" devices="${hw##*:}"
    start=$(date +%s.%N)
    "$bin/ftpipe-opt" "$work/model.mlir" -o /dev/null \
      --ftpipe-annotate-costs="hardware=$hardware" \
      --ftpipe-mixed-pipe="devices=$devices replicas=auto verbose=true schedule=$schedule microbatches=8" \
      2> "$work/log" || true
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    python3 - "$work/log" "$model" "$(basename "$hardware" .json)" "$devices" "$seconds" <<'PY'
import re, sys
log, model, hw, devices, seconds = sys.argv[1:]
line = re.compile(r"depth +(\d+), replicas ([\d,]+(?: \(cut in \d+\))?): (?:simulated ([\d.]+) ms per mini-batch"
                  r".*objective ([\d.]+) ms per micro-batch)?")
bound = re.compile(r"bound \(chain, compute only\): pure pipeline ([\d.]+) ms per mini-batch, "
                   r"replicated (?:([\d.]+) ms \(depth \d+, replicas ([\d,]+)\)|- \(none fits\)); "
                   r"compute ([\d.]+) ms per micro-batch, at least \d+ devices, gradients ([\d.]+) GiB, "
                   r"all-reduce over 2 ([\d.]+) ms")
pure = best = chosen = bounds = None
for text in open(log):
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
    if m.group(3) is None:
        continue
    option = (float(m.group(3)), float(m.group(4)), depth, replicas)
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
bound_cell = prices = "-"
if bounds and bounds[1] and pure:
    bound_cell = f"{pure[0] / float(bounds[1]):.2f} ({bounds[2]})"
if bounds:
    prices = f"{float(bounds[4]):.2f}, {float(bounds[5]):.1f}, {8 * float(bounds[3]):.1f}"
print(f"| {model} | {hw} | {devices} | {cell(pure)} | {best_cell} | {ratio} | {chosen} | {bound_cell} | {prices} | {float(seconds):.1f} |")
PY
  done
done
