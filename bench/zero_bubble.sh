#!/usr/bin/env bash
# zero_bubble.sh [BUILD] [T5_HARDWARE] - zero-bubble schedules, measured and
# predicted (not a test).
#
# 1. Measured: a small GPT-2 (4 layers, n_embd 256, vocabulary 8192, 4 x 128
#    tokens per micro-batch) planned by Mixed-Pipe for 4 devices with 6
#    stages (non-adjacent stages share a device), compiled (split backwards),
#    trained 6 steps of 8 micro-batches on 4 MPI processes under 1F1B with
#    flush, ZB-H1 and zb-auto. For each: ftpipe-run's measured time per
#    micro-batch and idle share against the simulator on the same action
#    lists with the per-stage F/I/W costs measured in the run
#    (--compare-simulator), and the planner's prediction for the plan from
#    the cost model (ftpipe-report's schedules table, I and W priced
#    separately). The load average is printed: with more processes than
#    free cores the measured figures are not the schedules'.
# 2. Simulated: T5-3B planned as the README's main command plans it
#    (ftpipe-auto-partition, Adafactor, 8 x RTX 2080 Ti by default) and M = 8,
#    reported under every schedule: the bubble that 1F1B leaves and ZB-H1 and
#    zb-auto remove. Set SKIP_T5=1 to leave it out (it partitions T5-3B:
#    minutes).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
t5_hardware="${2:-rtx2080ti-pcie-x8}"
bin="$build/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$bin/ftpipe-model-gen" "$root/bench/models/gpt2-small-bench.json" --loss --quiet -o "$work/gpt2.mlir"
"$bin/ftpipe-opt" "$work/gpt2.mlir" --mlir-print-debuginfo -o "$work/plan.mlir" \
  --pass-pipeline='builtin.module(ftpipe-mixed-pipe-pipeline{devices=4 stages=6})'
echo "== planner's prediction (cost model, M = 8; ms per mini-batch)"
"$bin/ftpipe-opt" "$work/plan.mlir" -o /dev/null --ftpipe-report |
  sed -n '/^schedule /,$p'
"$bin/ftpipe-compile" "$work/plan.mlir" --devices=4 -o "$work/gpt2" 2> "$work/compile.log"
python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/gpt2" 96 "$work/data.safetensors"
PYTHONPATH="$root/tools/ftpipe-compile" python3 -c "import ftpipe_manifest, sys; s = ftpipe_manifest.stages(ftpipe_manifest.load(sys.argv[1])); print('plan: stages on devices', [s[i]['device'] for i in sorted(s)])" "$work/gpt2"
echo "== measured on this machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for schedule in 1f1b zb-h1 zb-auto; do
  echo "-- $schedule"
  "$bin/ftpipe-run" "$work/gpt2" --np 4 --data "$work/data.safetensors" --seed 1 \
    --steps 6 --micro-batches 8 --schedule "$schedule" \
    --compare-simulator 2> /dev/null | grep -v '^step'
done
echo "load after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "${SKIP_T5:-0}" != 1 ]; then
  echo "== T5-3B, Mixed-Pipe's plan for $t5_hardware, Adafactor, M = 8 (simulated)"
  "$bin/ftpipe-model-gen" t5-3b --quiet -o "$work/t5.mlir"
  "$bin/ftpipe-opt" "$work/t5.mlir" -o /dev/null \
    --ftpipe-annotate-costs="hardware=$t5_hardware" \
    --ftpipe-auto-partition="optimizer=adafactor" \
    --ftpipe-report="optimizer=adafactor microbatches=8" |
    sed -n -e '/^FTPipe partition report/p' -e '/^schedule /,$p'
fi
