#!/usr/bin/env bash
# replan_gpt2.sh [MODEL] [BUILD] - re-planning from measured costs, done by
# hand (not a test; issue 31): the steps `ftpipe-run --replan` is to make
# during a run, each with a tool that exists today, and what they gain.
#
#  1. plan A: `ftpipe-compile --devices=2` on the default preset;
#  2. run A on 2 MPI processes with a measured profile (--profile-out, after
#     a warm-up step): busiest / mean of the processes' compute and the step
#     time before;
#  3. plan B: `ftpipe-compile --profile` (the same model priced with what A
#     measured) -- the "decision" starts here;
#  4. run A again and migrate to B after the warm-up (--migrate-at,
#     --migrate-to): the migration's own time;
#  5. run B with a profile: busiest / mean and step time after, and B under
#     --compare-simulator: its measured / simulated time per micro-batch.
# Prints one table, then one more with process 0 slowed 2x (--debug-slow) in
# every run: plan B moves work off it. MODEL is ftpipe-model-gen's model (default gpt2-tiny; the
# issue's benchmark is a GPT-2 of 124M parameters, n_embd 768, 12 layers,
# micro-batch 4 x 128: give its config JSON, and run it on a quiet machine).
# Timings depend on the machine's load: the script prints `uptime` first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="${1:-gpt2-tiny}"
bin="${2:-$root/build}/bin"
steps="${STEPS:-6}" warmup="${WARMUP:-2}" micro="${MICRO_BATCHES:-4}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "load: $(uptime)"

"$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$work/m.mlir"
"$bin/ftpipe-compile" "$work/m.mlir" --devices=2 -o "$work/a" 2> /dev/null
python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/a" 16 "$work/d.st"
run() { "$bin/ftpipe-run" "$@" --np 2 --data "$work/d.st" \
  --micro-batches "$micro" --schedule 1f1b --timeout 1200 \
  --failure-timeout 600; }

# scenario NAME [--debug-slow=R:F]: profile A, plan B from it, migrate, B.
scenario() {
  local name="$1" w="$work/$1"
  shift
  mkdir -p "$w"
  run "$work/a" "$@" --steps "$steps" --profile-out "$w/a.json" \
    --profile-warmup "$warmup" > /dev/null 2>&1
  local start compiled
  start=$(date +%s.%N)
  "$bin/ftpipe-compile" "$work/m.mlir" --devices=2 --profile="$w/a.json" \
    -o "$w/b" 2> /dev/null
  compiled=$(date +%s.%N)
  run "$work/a" "$@" --steps "$((warmup + 2))" --migrate-at "$warmup" \
    --migrate-to "$w/b" > "$w/moved.log" 2>&1
  run "$w/b" "$@" --steps "$steps" --profile-out "$w/b.json" \
    --profile-warmup "$warmup" > /dev/null 2>&1
  run "$w/b" "$@" --steps "$steps" --compare-simulator > "$w/b.timing" 2>&1
  echo "== $name ${*:-(no slowdown)}, load $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$work" "$w" "$(echo "$compiled - $start" | bc)" <<'PY'
import json, re, sys
work, w, compile_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
def summary(path):
    p = json.load(open(path))
    compute = [q["compute_ms"] for q in p["processes"]]
    step = max(q["step_ms"] for q in p["processes"])
    return max(compute) / (sum(compute) / len(compute)), step, compute
def plan(path):
    m = json.load(open(f"{path}/manifest.json"))
    return [s["device"] for s in sorted(m["stages"], key=lambda s: s["id"])]
ba, sa, ca = summary(f"{w}/a.json")
bb, sb, cb = summary(f"{w}/b.json")
moved = re.search(r"migrated .*: ([0-9.]+) s", open(f"{w}/moved.log").read())
ratio = re.search(r"measured / simulated: ([0-9.]+)",
                  open(f"{w}/b.timing").read())
print("plan A stages on devices %s, plan B %s" % (plan(f"{work}/a"),
                                                   plan(f"{w}/b")))
print("%-34s %12s %12s" % ("", "before (A)", "after (B)"))
print("%-34s %12.3f %12.3f" % ("busiest / mean compute", ba, bb))
print("%-34s %12.1f %12.1f" % ("step time, ms (median)", sa, sb))
print("%-34s %12s %12s" % ("per-process compute, ms",
                          "/".join("%.1f" % c for c in ca),
                          "/".join("%.1f" % c for c in cb)))
print("step time gain: %.1f %%" % (100 * (sa - sb) / sa))
print("B measured / simulated per micro-batch: %s" %
      (ratio.group(1) if ratio else "?"))
print("decision to running: compile %.2f s + migration %s s" %
      (compile_s, moved.group(1) if moved else "?"))
PY
}

scenario measured
scenario slowed --debug-slow=0:2
