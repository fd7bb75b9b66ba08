#!/usr/bin/env bash
# zero_bubble.sh [BUILD] - zero-bubble schedules measured on this machine
# against 1F1B and against the simulator (not a test).
#
# A small GPT-2 (4 layers, n_embd 256, vocabulary 8192, 4 x 128 tokens per
# micro-batch) planned by Mixed-Pipe for P = 2 and P = 4 devices (2P - 1
# stages: non-adjacent stages share a device), compiled (split backwards),
# trained STEPS steps (default 6) of M = 8 micro-batches on P MPI processes
# under 1F1B with flush, ZB-H1 and zb-auto (its lists bounded by each
# device's memory, from the planner's stage times in the manifest). For
# each: ftpipe-run's measured time per micro-batch and idle share, and the
# simulator on the same action lists with the per-stage F/I/W costs measured
# in the run (--compare-simulator: measured / simulated); and the planner's
# prediction for the plan from the cost model (ftpipe-report's schedules
# table, ms per mini-batch), and the run's timeline beside the simulated one
# as text (bench/trace_text.py). The load average is printed before and after
# each run: with more processes than free cores the measured figures are the
# load's more than the schedules'. Where the processes outnumber the cores
# they run on (4 on this machine's 2), the comparison simulates them sharing
# the cores, priced by CPU time, and prints the simulation of a core each
# beside it (docs/Runtime.md). Simulated figures for the paper's models:
# bench/zero_bubble_planned.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
steps="${STEPS:-6}"
bin="$build/bin"
bench_work

"$bin/ftpipe-model-gen" "$root/bench/models/gpt2-small-bench.json" --loss --quiet -o "$work/gpt2.mlir"
for p in ${PROCESSES:-2 4}; do
  stages=$((2 * p - 1))
  echo "=== $p processes: Mixed-Pipe, $stages stages on $p devices"
  "$bin/ftpipe-opt" "$work/gpt2.mlir" --mlir-print-debuginfo -o "$work/plan$p.mlir" \
    --pass-pipeline="builtin.module(ftpipe-mixed-pipe-pipeline{devices=$p stages=$stages})"
  echo "== planner's prediction (cost model, M = 8; ms per mini-batch)"
  "$bin/ftpipe-opt" "$work/plan$p.mlir" -o /dev/null --ftpipe-report |
    sed -n -e '/^ZB-H1 bound/p' -e '/^schedule /,/^async/p'
  "$bin/ftpipe-compile" "$work/plan$p.mlir" --devices="$p" -o "$work/gpt2-$p" 2> "$work/compile.log"
  python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/gpt2-$p" $((8 * steps)) "$work/data$p.safetensors"
  PYTHONPATH="$root/tools/ftpipe-compile" python3 -c "import ftpipe_manifest, sys; s = ftpipe_manifest.stages(ftpipe_manifest.load(sys.argv[1])); print('plan: stages on devices', [s[i]['device'] for i in sorted(s)])" "$work/gpt2-$p"
  echo "== measured on this machine: $(nproc) cores"
  for schedule in 1f1b zb-h1 zb-auto; do
    echo "-- $schedule (load before $(load))"
    /usr/bin/time -f "process 0 launcher: %e s wall, %U s user" \
      "$bin/ftpipe-run" "$work/gpt2-$p" --np "$p" --data "$work/data$p.safetensors" --seed 1 \
      --steps "$steps" --micro-batches 8 --schedule "$schedule" \
      --compare-simulator --trace "$work/trace.json" 2> "$work/run.err" |
      grep -v '^step' || { cat "$work/run.err"; exit 1; }
    grep -E "memory: peak|launcher" "$work/run.err" | sed -E 's/ \[runtime.*//' || true
    # The run's timeline, measured and simulated (--trace and its
    # .simulated.json twin, each scaled to its own span).
    python3 "$root/bench/trace_text.py" --width 120 "$work/trace.json" "$work/trace.json.simulated.json"
  done
  echo "load after the runs: $(load)"
done
