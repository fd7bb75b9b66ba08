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
#              requires it);
#   cpu-norecompute  as cpu, with --recompute=false.
# Every plan is made for 1F1B with 4 micro-batches and AdamW, compiled, and
# trained 1 and then 3 steps, each process under /usr/bin/time: a process's
# CPU time a step is the difference over 2, which does not count the time it
# waited for a core, so the figures hold under load. Prints per plan the
# predicted busiest / mean compute (ftpipe-report's imbalance), the measured
# CPU seconds a step of each process and their busiest / mean, the CPU of
# both a step, the last step's samples per second (wall time: it depends on
# the load, printed before each run) and the losses of the 3-step run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
model="${3:-$root/bench/models/gpt2-124m.json}"
plans="${4:-default cpu replanned}"
bin="$build/bin"
if [ -n "${2:-}" ]; then
  work="$2"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
load() { cut -d' ' -f1-3 /proc/loadavg; }
setup="devices=2 schedule=1f1b microbatches=4 optimizer=adamw"

echo "date $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(load)"
"$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$work/model.mlir"
if [ ! -f "$work/cpu.json" ]; then
  echo "== measure the CPU, load $(load)"
  "$bin/ftpipe-devices" --cpu --json --devices 2 > "$work/cpu.json"
fi

# run NAME STEPS [OPTIONS...]: trains NAME's artifacts for STEPS steps, each
# MPI process's CPU time in NAME-STEPS.time.RANK ("user system").
run() {
  local name="$1" steps="$2"
  shift 2
  mpirun -np 2 sh -c \
    'exec /usr/bin/time -f "%U %S" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
    "$work/$name-$steps.time" "$bin/ftpipe-run" "$work/$name" \
    --data "$work/zeros.safetensors" --steps "$steps" --micro-batches 4 \
    --schedule 1f1b --lr 1e-3 --weight-decay 0.01 --timeout 1200 \
    --failure-timeout 600 "$@" > "$work/$name-$steps.log" 2>&1
}

# plan NAME PIPELINE-OPTIONS COMPILE-OPTIONS: partition, report, compile, run.
plan() {
  local name="$1" options="$2" compile="$3"
  echo "== plan '$name', load $(load)"
  "$bin/ftpipe-opt" "$work/model.mlir" \
    --ftpipe-partition-pipeline="$setup $options quiet=true" \
    -o "$work/$name.mlir"
  "$bin/ftpipe-opt" "$work/$name.mlir" \
    --ftpipe-report="json=$work/$name-report.json" -o /dev/null > /dev/null
  # shellcheck disable=SC2086
  "$bin/ftpipe-compile" "$work/$name.mlir" --devices=2 $compile \
    -o "$work/$name" 2> "$work/$name-compile.log"
  [ -f "$work/zeros.safetensors" ] ||
    python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/$name" 16 \
      "$work/zeros.safetensors"
  echo "== run '$name' 1 step, load $(load)"
  run "$name" 1
  echo "== run '$name' 3 steps, load $(load)"
  run "$name" 3 --profile-out "$work/$name-profile.json"
  grep '^step' "$work/$name-3.log" | cut -c1-120 || true
}

for name in $plans; do
  case "$name" in
  default) plan default "" "" ;;
  cpu) plan cpu "hardware=$work/cpu.json" "" ;;
  replanned) plan replanned "profile=$work/default-profile.json" "" ;;
  cpu-auto) plan cpu-auto "hardware=$work/cpu.json recompute=auto" "" ;;
  cpu-norecompute)
    plan cpu-norecompute "hardware=$work/cpu.json recompute=false" "" ;;
  *) echo "unknown plan '$name'" >&2; exit 1 ;;
  esac
done
echo "load at the end $(load)"

python3 - "$work" $plans <<'PY'
import json, re, sys
work, plans = sys.argv[1], sys.argv[2:]
def cpu(name, steps, rank):
    user, system = open(f"{work}/{name}-{steps}.time.{rank}").read().split()[-2:]
    return float(user) + float(system)
print("\n| plan | stages | predicted busiest / mean | CPU s a step, process 0, 1 "
      "| measured busiest / mean | CPU s a step, both | samples/s, last step "
      "| losses |")
print("|---|---|---|---|---|---|---|---|")
for name in plans:
    report = json.load(open(f"{work}/{name}-report.json"))
    per = [(cpu(name, 3, r) - cpu(name, 1, r)) / 2 for r in (0, 1)]
    ratio = max(per) / (sum(per) / len(per)) if sum(per) > 0 else float("nan")
    rates = re.findall(r"^step \d+ loss [0-9.]+ samples/s ([0-9.]+)",
                       open(f"{work}/{name}-3.log").read(), re.M)
    losses = re.findall(r"^step \d+ loss ([0-9.]+)",
                        open(f"{work}/{name}-3.log").read(), re.M)
    wall = rates[-1] if rates else "-"
    print(f"| {name} | {report['stages']} | {report['imbalance']:.3f} | "
          f"{per[0]:.2f}, {per[1]:.2f} | {ratio:.3f} | {sum(per):.2f} | "
          f"{wall} | {', '.join(losses)} |")
PY
