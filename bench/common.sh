# common.sh - sourced by the bench scripts: the checkout's root, a work
# directory, the load average, Open MPI's consent to run as root, and the
# plan-compile-run step of the scripts that compare plans by their profiles.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The load average of the last 1, 5 and 15 minutes.
load() { cut -d' ' -f1-3 /proc/loadavg; }

# bench_work [DIR]: `work` becomes DIR (made if missing, kept) or a fresh
# temporary directory removed at exit.
bench_work() {
  if [ -n "${1:-}" ]; then
    work="$1"
    mkdir -p "$work"
  else
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
  fi
}

# plan_and_run NAME PIPELINE-OPTIONS STEPS [RUN-OPTIONS...]: partitions
# $work/model.mlir with `$setup PIPELINE-OPTIONS` (2 devices), writes its
# report's JSON, compiles it (unless $work/NAME is compiled already), runs it
# on 2 processes for STEPS steps on all-zero data with a profile
# ($work/NAME-profile.json) and prints its step lines. Needs `bin`, `work`
# and `setup`.
plan_and_run() {
  local name="$1" options="$2" steps="$3"
  shift 3
  echo "== plan '$name', load $(load)"
  "$bin/ftpipe-opt" "$work/model.mlir" \
    --ftpipe-partition-pipeline="$setup $options quiet=true" \
    -o "$work/$name.mlir"
  "$bin/ftpipe-opt" "$work/$name.mlir" \
    --ftpipe-report="json=$work/$name-report.json" -o /dev/null > /dev/null
  [ -f "$work/$name/manifest.json" ] ||
    "$bin/ftpipe-compile" "$work/$name.mlir" --devices=2 -o "$work/$name" \
      2> "$work/$name-compile.log"
  [ -f "$work/zeros.safetensors" ] ||
    python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/$name" 16 \
      "$work/zeros.safetensors"
  echo "== run '$name', load $(load)"
  "$bin/ftpipe-run" "$work/$name" --np 2 --data "$work/zeros.safetensors" \
    --steps "$steps" --profile-out "$work/$name-profile.json" \
    --timeout 1200 --failure-timeout 600 "$@" > "$work/$name-run.log" 2>&1
  grep '^step' "$work/$name-run.log" | cut -c1-120 || true
}
