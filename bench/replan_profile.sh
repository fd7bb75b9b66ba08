#!/usr/bin/env bash
# replan_profile.sh [BUILD] [STEPS] [WORK] [MODEL] - plans from measured costs
# (not a test; issue 31). MODEL is a model-gen config or bundled name
# (default bench/models/gpt2-124m.json: n_embd 768, 12 layers, vocabulary
# 50257, micro-batch 4 x 128; gpt2-tiny runs in seconds). WORK, when given,
# is kept.
#
# Three plans of MODEL for 2 devices, each trained for STEPS (default 4)
# steps of 4 micro-batches under 1F1B on 2 MPI processes with
# --profile-out (the first step is the warm-up the profile leaves out):
#   default   priced on the default GPU preset (rtx2080ti-pcie-x8);
#   profiled  the same preset, op times replaced by the default plan's
#             measured profile (ftpipe-opt's partition pipeline with
#             profile=, the same passes as ftpipe-compile --profile);
#   cpu       priced on this machine's measured CPU description
#             (ftpipe-devices --cpu --json --devices 2);
# and with process 1 slowed 2x (--debug-slow 1:2) in every run:
#   slowed    the default plan;
#   replanned the default preset with the slowed run's profile (which plans
#             device 1 as 2x slower).
# One table: per plan the predicted busiest / mean compute (ftpipe-report's
# imbalance) and 1F1B time per step, the measured busiest / mean (the
# processes' median compute per step, from the profile; a slowed process's
# includes its slowdown), the measured step time (the slowest process's
# median step) and measured / predicted (the slowed rows' predictions know
# of the slowdown only when re-planned). Times depend on the load, printed
# before each run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
steps="${2:-4}"
model="${4:-$root/bench/models/gpt2-124m.json}"
bin="$build/bin"
bench_work "${3:-}"
setup="devices=2 schedule=1f1b microbatches=4"

"$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$work/model.mlir"
echo "== measure the CPU, load $(load)"
"$bin/ftpipe-devices" --cpu --json --devices 2 > "$work/cpu.json"

# plan NAME PIPELINE-OPTIONS [RUN-OPTIONS...]: partition, report, compile,
# run with a profile (common.sh).
plan() {
  local name="$1" options="$2"
  shift 2
  plan_and_run "$name" "$options" "$steps" "$@"
}

plan default ""
plan profiled "profile=$work/default-profile.json"
plan cpu "hardware=$work/cpu.json"
plan slowed "" --debug-slow 1:2
plan replanned "profile=$work/slowed-profile.json" --debug-slow 1:2

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print("\n| plan | stages | predicted busiest / mean | measured busiest / mean "
      "| predicted 1F1B step ms | measured step ms | measured / predicted |")
print("|---|---|---|---|---|---|---|")
for name in ("default", "profiled", "cpu", "slowed", "replanned"):
    report = json.load(open(f"{work}/{name}-report.json"))
    profile = json.load(open(f"{work}/{name}-profile.json"))
    compute = [p["compute_ms"] for p in profile["processes"]]
    measured = max(compute) / (sum(compute) / len(compute))
    step = max(p["step_ms"] for p in profile["processes"])
    predicted = report["onef1b_ms_per_minibatch"]
    print(f"| {name} | {report['stages']} | {report['imbalance']:.3f} | "
          f"{measured:.3f} | {predicted:.1f} | {step:.1f} | "
          f"{step / predicted:.3f} |")
PY
