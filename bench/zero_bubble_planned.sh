#!/usr/bin/env bash
# zero_bubble_planned.sh [BUILD] [HARDWARE] - the zero-bubble schedules on
# the paper's models, simulated (not a test; no figure depends on the
# machine's load).
#
# T5-3B (Adafactor, the README's main command: ftpipe-auto-partition),
# GPT2-XL and BERT-large (Adam; the plans of Mixed-Pipe, Seq-Pipe dp and
# Seq-Pipe greedy) on 8 x RTX 2080 Ti by default, M = 8 and 16 (each plan
# made for its M), with recomputation (FTPipe's default). Per plan, from
# ftpipe-report's JSON: the simulated mini-batch and idle share of 1F1B with
# flush, ZB-H1 (within each device's 1F1B peak, as ftpipe-run builds it) and
# zb-auto (its fastest lists within each device's memory,
# schedule::zeroBubbleLimits), the ZB paper's ZB-H1 bound
# M(F+B+W) + (p-1)(F+B-W) from the busiest device's F, B and W, the async
# time per mini-batch, the step no synchronous schedule beats
# (schedule::stepLowerBound: the plan's fill and drain, memory unbounded)
# and zb-auto's step against the async time and that bound, and the largest
# device's memory under 1F1B, ZB-H1 and zb-auto; then zb-auto without a
# memory bound (the same plan on devices of 1 TiB: its fastest lists
# regardless of memory) and what those need. 1F1B is the lists ftpipe-run
# runs (schedule::generate), as the report shows it since 2026-11-27.
# Rows "+sync" are the same planner with `sync-schedule=zb-auto` (candidate
# plans chosen by their simulated zb-auto step within memory; SYNC=0 leaves
# them out).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
hardware="${2:-rtx2080ti-pcie-x8}"
bin="$build/bin"
bench_work

row() { # MODEL OPTIMIZER METHOD M PARTITION-PASS [PASS-OPTION]
  local model=$1 optimizer=$2 method=$3 m=$4 pass=$5 extra=${6:-}
  local plan="$work/$model.$method.$m.mlir"
  if ! "$bin/ftpipe-opt" "$work/$model.mlir" -o "$plan" --mlir-print-debuginfo \
      --ftpipe-annotate-costs="hardware=$hardware" \
      --ftpipe-$pass="$extra optimizer=$optimizer microbatches=$m" 2> "$work/err"; then
    echo "| $model | $method | $m | no plan: $(grep -m1 error "$work/err" | cut -c1-80) |"
    return
  fi
  "$bin/ftpipe-opt" "$plan" -o /dev/null \
    --ftpipe-report="json=$work/bounded.json" > /dev/null
  sed -E 's/memory_bytes = [0-9]+, tflops/memory_bytes = 1099511627776, tflops/g' "$plan" |
    "$bin/ftpipe-opt" -o /dev/null --ftpipe-report="json=$work/free.json" > /dev/null
  python3 - "$model" "$method" "$m" "$work/bounded.json" "$work/free.json" <<'PY'
import json, sys
model, method, m, bounded, free = sys.argv[1:]
b = json.load(open(bounded)); f = json.load(open(free))
rows = {r["schedule"]: r for r in b["schedules"]}
GiB = float(1 << 30)
def ms(r): return "%.1f (%.1f %%)" % (r["ms_per_minibatch"], 100 * r["idle_fraction"])
def peak(r): return "%.2f%s" % (max(r["memory_bytes"]) / GiB, "" if r["memory_fits"] else " over")
one, h1, auto, asy = rows["1f1b"], rows["zb-h1"], rows["zb-auto"], rows["async"]
bound = b["zb_h1_bound"]
step = b["step_lower_bound"]["ms_per_minibatch"]
free_auto = {r["schedule"]: r for r in f["schedules"]}["zb-auto"]
print("| %s | %s | %s | %s | %s | %s | %.1f (%.1f %%) | %.1f | %.1f (%.2f) | %.2f | %.3f | %.3f | %s / %s / %s | %s, %.2f GiB |" % (
    model, method, m, ms(one), ms(h1), ms(auto),
    bound["ms_per_minibatch"], 100 * bound["idle_fraction"],
    asy["ms_per_minibatch"], step, step / asy["ms_per_minibatch"],
    auto["ms_per_minibatch"] / asy["ms_per_minibatch"],
    auto["ms_per_minibatch"] / step,
    auto["ms_per_minibatch"] / one["ms_per_minibatch"],
    peak(one), peak(h1), peak(auto),
    ms(free_auto), max(free_auto["memory_bytes"]) / GiB))
PY
}

echo "hardware $hardware; simulated (load $(load) does not matter)"
echo "| model | plan | M | 1F1B ms (idle) | ZB-H1 ms (idle) | zb-auto ms (idle) | ZB-H1 bound ms (idle) | async ms | sync step bound ms (/ async) | zb-auto / async | zb-auto / bound | zb-auto / 1F1B | max GiB 1F1B / ZB-H1 / zb-auto | zb-auto unbounded ms (idle), max GiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
"$bin/ftpipe-model-gen" t5-3b --quiet -o "$work/t5-3b.mlir"
sync="${SYNC:-1}"
for m in 8 16; do
  row t5-3b adafactor auto-partition "$m" auto-partition
  [ "$sync" = 0 ] || row t5-3b adafactor auto-partition+sync "$m" auto-partition sync-schedule=zb-auto
done
for model in gpt2-xl bert-large-uncased; do
  "$bin/ftpipe-model-gen" "$model" --quiet -o "$work/$model.mlir"
  for m in 8 16; do
    row "$model" adam mixed-pipe "$m" mixed-pipe
    [ "$sync" = 0 ] || row "$model" adam mixed-pipe+sync "$m" mixed-pipe sync-schedule=zb-auto
    row "$model" adam seq-pipe-dp "$m" seq-pipe method=dp
    row "$model" adam seq-pipe-greedy "$m" seq-pipe method=greedy
  done
done
