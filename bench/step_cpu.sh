#!/usr/bin/env bash
# step_cpu.sh BUILD ARTIFACTS DATA [ARGS...] - CPU time of one training step
# of ftpipe-run on 2 processes (issue 25; not a test, prints measured
# figures). Runs `ftpipe-run ARTIFACTS --np 2 --steps N` for N = 1 and 2
# (1F1B, 4 micro-batches, AdamW's lr 1e-3 and weight decay 0.01, then ARGS)
# under /usr/bin/time and prints the user and system CPU time and the minor
# page faults of both processes (the launcher's children) for each, and
# their difference: the CPU time and faults of one step, start-up (weights,
# code loading) left out. SCHEDULE (default 1f1b) picks the schedule. CPU time
# does not count the waits for a core of a loaded machine, so the figure
# means something where the wall time does not; the load is printed beside.
#
#   bench/step_cpu.sh build /tmp/plan /tmp/zeros.safetensors
set -euo pipefail
build="$1" artifacts="$2" data="$3"
shift 3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
declare -A user system faults
for steps in 1 2; do
  echo "== $steps step(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "%U %S %R" -o "$log.time" "$build/bin/ftpipe-run" \
    "$artifacts" --np 2 --data "$data" --steps "$steps" --micro-batches 4 \
    --schedule "${SCHEDULE:-1f1b}" --lr 1e-3 --weight-decay 0.01 "$@" > "$log" 2>&1 ||
    { cat "$log"; exit 1; }
  grep '^step' "$log" | cut -c1-100
  read -r user[$steps] system[$steps] faults[$steps] < "$log.time"
  rm -f "$log.time"
  echo "CPU, $steps step(s): user ${user[$steps]} s, system ${system[$steps]} s, minor faults ${faults[$steps]}"
done
python3 - "${user[1]}" "${system[1]}" "${faults[1]}" "${user[2]}" "${system[2]}" "${faults[2]}" <<'PY'
import sys
u1, s1, f1, u2, s2, f2 = map(float, sys.argv[1:])
print(f"CPU a step (2 steps - 1 step, both processes): {u2 + s2 - u1 - s1:.2f} s"
      f" (user {u2 - u1:.2f} s, system {s2 - s1:.2f} s), minor faults {f2 - f1:.0f}")
PY
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
