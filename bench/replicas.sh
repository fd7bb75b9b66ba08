#!/usr/bin/env bash
# replicas.sh [BUILD] [MODEL] - pipeline depth x data-parallel replicas on
# 4 processes, planned and measured (not a test).
#
# MODEL is an ftpipe-model-gen config (default bench/models/gpt2-small-bench.json,
# a small GPT-2: 4 layers, n_embd 256, vocabulary 8192, 4 x 128 tokens per
# micro-batch; the issue's real-size run is bench/models/gpt2-124m.json, about
# 40 s of CPU a step per process there: run it on a quiet machine), 1F1B with
# flush, MICRO_BATCHES (default 8) micro-batches per step, STEPS (default 6) steps:
#  0. the runtime's all-reduce among the 4 processes, measured
#     (ftpipe-bench-allreduce: ALLREDUCE_MIB, default 64, of floats, the
#     median of 5) and given as the description's link rate, so that the
#     planner prices the replicas' gradient all-reduce as this machine runs
#     it (ALLREDUCE_GBPS=RATE gives a rate measured before instead);
#  1. the planner's table (ftpipe-report replicas=auto) on a description of
#     4 CPU processes of this machine (written below: a rough 0.05 TFLOP/s,
#     the measured all-reduce's links, and the machine's cores as the node's
#     node_cores: 4 processes on 2 cores compute 2 at a time, so a
#     mini-batch takes at least its work over the cores; the absolute figures
#     follow from it, the ranking of the options is what the planner acts on);
#  2. measured: the plan for 4 devices run as 4 x 1, Mixed-Pipe's plan for 2
#     devices run twice (2 x 2, --replicas 2), the whole model on 1 device
#     run 4 times (1 x 4), each STEPS steps on 4 MPI processes with
#     --compare-simulator (measured time per micro-batch against the
#     simulator on the same lists with the stages' measured costs and the
#     all-reduce priced at the measured rate: --allreduce-gbps).
# The load average is printed: with other work on the machine the measured
# times are not the schedules'.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
model="${2:-$root/bench/models/gpt2-small-bench.json}"
steps="${STEPS:-6}" micro="${MICRO_BATCHES:-8}"
bin="$build/bin"
bench_work

gbps="${ALLREDUCE_GBPS:-}"
if [ -z "$gbps" ]; then
  echo "== the all-reduce among 4 processes (load $(load))"
  measured=$(mpirun -np 4 --oversubscribe "$bin/ftpipe-bench-allreduce" \
    "${ALLREDUCE_MIB:-64}" 5)
  echo "$measured"
  gbps=$(echo "$measured" | sed -n 's/.*ring link rate \([0-9.]*\) GB\/s.*/\1/p')
fi
echo "links of the description: $gbps GB/s"
cores=$(nproc)
cat > "$work/cpu4.json" <<JSON
{"name": "cpu-processes-x4", "dtype": "fp32", "node_cores": [$cores],
 "intra_node": {"gbps": $gbps, "latency_us": 20},
 "network": {"gbps": $gbps, "latency_us": 20},
 "devices": [{"name": "cpu", "count": 4, "memory_bytes": 6442450944,
              "tflops": 0.05, "mem_gbps": 10, "launch_us": 5, "node": 0}]}
JSON
"$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$work/gpt2.mlir"
"$bin/ftpipe-opt" "$work/gpt2.mlir" -o "$work/costed.mlir" \
  --ftpipe-annotate-costs="hardware=$work/cpu4.json"
echo "== planned (ftpipe-report replicas=auto, 1F1B, M = $micro)"
"$bin/ftpipe-opt" "$work/costed.mlir" -o /dev/null \
  --ftpipe-report="replicas=auto schedule=1f1b microbatches=$micro" |
  sed -n '/^replicas (/,$p'

python_dataset="$root/test/Runtime/Inputs/make-dataset.py"
for depth in 4 2 1; do
  width=$((4 / depth))
  "$bin/ftpipe-opt" "$work/costed.mlir" -o "$work/plan$depth.mlir" \
    --mlir-print-debuginfo \
    --ftpipe-mixed-pipe="devices=$depth schedule=1f1b microbatches=$micro"
  "$bin/ftpipe-compile" "$work/plan$depth.mlir" --devices=$depth \
    -o "$work/gpt2-$depth" 2> "$work/compile$depth.log"
  python3 "$python_dataset" "$work/gpt2-$depth" 96 "$work/data$depth.safetensors"
done
echo "== measured on this machine: $(nproc) cores, load $(load)"
for depth in 4 2 1; do
  width=$((4 / depth))
  echo "-- $depth x $width"
  replicas=()
  [ "$width" -gt 1 ] && replicas=(--replicas "$width")
  "$bin/ftpipe-run" "$work/gpt2-$depth" --np 4 "${replicas[@]}" \
    --data "$work/data$depth.safetensors" --seed 1 --steps "$steps" \
    --micro-batches "$micro" --schedule 1f1b --compare-simulator \
    --allreduce-gbps "$gbps" 2> /dev/null |
    grep -v '^step'
done
echo "load after the runs: $(load)"
