#!/usr/bin/env bash
# cpu_plan_balance.sh [BUILD] [WORK] [MODEL] [PLANS] - how well plans balance
# the CPU time of 2 MPI processes (not a test; issues 31 and 25). MODEL is a
# model-gen config or bundled name (default bench/models/gpt2-124m.json);
# WORK, when given, is kept (and a cpu.json already in it is reused).
# PLANS (default "default cpu replanned") picks among:
#   default    priced on the default GPU preset (rtx2080ti-pcie-x8);
#   cpu        priced on this machine's measured CPU description
#              (ftpipe-devices --cpu --json --devices 2);
#   replanned  the default preset with the default plan's measured profile
#              (ftpipe-run --profile-out; the default plan must run first);
#   cpu-auto   as cpu, with --recompute=auto (recompute only where memory
#              requires it; ftpipe-compile's default for the CPU target);
#   cpu-replanned  the CPU description with the cpu-auto plan's measured
#              profile, recompute=auto (cpu-auto must run first; on the CPU
#              target the profile's CPU times price the stages);
#   cpu-norecompute  as cpu, with --recompute=false.
# Every plan is made for 1F1B with 4 micro-batches and AdamW, compiled (an
# artifact directory already in WORK is reused) and trained STEPS steps
# (default 3; the variable STEPS) with --profile-out: the profile gives each
# process's CPU time a step (`cpu_ms`, the median after the warm-up step),
# which leaves out the time a process waited for a core, so the figures hold
# under load. Prints per plan the predicted busiest / mean compute
# (ftpipe-report's imbalance), the measured CPU seconds a step of each
# process and their busiest / mean, the CPU of both a step, the slowest
# process's median step (wall time: it depends on the load, printed before
# each run) and the losses.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
model="${3:-$root/bench/models/gpt2-124m.json}"
plans="${4:-default cpu replanned}"
bin="$build/bin"
bench_work "${2:-}"
setup="devices=2 schedule=1f1b microbatches=4 optimizer=adamw"

echo "date $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(load)"
"$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$work/model.mlir"
if [ ! -f "$work/cpu.json" ]; then
  echo "== measure the CPU, load $(load)"
  "$bin/ftpipe-devices" --cpu --json --devices 2 > "$work/cpu.json"
fi

# plan NAME PIPELINE-OPTIONS: partition, report, compile, run (common.sh).
plan() {
  plan_and_run "$1" "$2" "${STEPS:-3}" --micro-batches 4 --schedule 1f1b \
    --lr 1e-3 --weight-decay 0.01
}

for name in $plans; do
  case "$name" in
  default) plan default "" ;;
  cpu) plan cpu "hardware=$work/cpu.json" ;;
  replanned) plan replanned "profile=$work/default-profile.json" ;;
  cpu-auto) plan cpu-auto "hardware=$work/cpu.json recompute=auto" ;;
  cpu-replanned)
    plan cpu-replanned "hardware=$work/cpu.json profile=$work/cpu-auto-profile.json recompute=auto" ;;
  cpu-norecompute) plan cpu-norecompute "hardware=$work/cpu.json recompute=false" ;;
  *) echo "unknown plan '$name'" >&2; exit 1 ;;
  esac
done
echo "load at the end $(load)"

python3 - "$work" $plans <<'PY'
import json, re, sys
work, plans = sys.argv[1], sys.argv[2:]
print("\n| plan | stages | recomputing stages | predicted busiest / mean "
      "| CPU s a step, process 0, 1 | measured busiest / mean "
      "| CPU s a step, both | step s (wall) | losses |")
print("|---|---|---|---|---|---|---|---|---|")
for name in plans:
    report = json.load(open(f"{work}/{name}-report.json"))
    processes = json.load(open(f"{work}/{name}-profile.json"))["processes"]
    cpu = [p["cpu_ms"] / 1e3 for p in processes]
    ratio = max(cpu) / (sum(cpu) / len(cpu))
    step = max(p["step_ms"] for p in processes) / 1e3
    losses = re.findall(r"^step \d+ loss ([0-9.]+)",
                        open(f"{work}/{name}-run.log").read(), re.M)
    print(f"| {name} | {report['stages']} | {report['recompute_stages']} | "
          f"{report['imbalance']:.3f} | {cpu[0]:.2f}, {cpu[1]:.2f} | "
          f"{ratio:.3f} | {sum(cpu):.2f} | {step:.2f} | {', '.join(losses)} |")
PY
