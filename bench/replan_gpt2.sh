#!/usr/bin/env bash
# replan_gpt2.sh [MODEL] [BUILD] - re-planning from measured costs during a
# run (`ftpipe-run --replan auto`, issue 31; not a test):
#
#  1. plan A: `ftpipe-compile --devices=2` on the default preset;
#  2. run A on 2 MPI processes with a measured profile (--profile-out, after
#     a warm-up): busiest / mean of the processes' compute and the step
#     time before;
#  3. run A with `--replan auto`: after the warm-up, process 0 profiles the
#     run, compiles plan B from it in the background while training goes
#     on, and migrates when B is predicted faster by more than 5 %; its
#     lines say when, why, the predicted gain, the compile time and the time
#     from the decision to running on B; the trace gives the step time
#     (process 0's update to update) before and after the move;
#  4. run B with a profile: busiest / mean and step time after, and B under
#     --compare-simulator: its measured / simulated time per micro-batch.
# Prints one table, then one more with process 0 slowed 2x (--debug-slow) in
# every run: plan B moves work off it. MODEL is ftpipe-model-gen's model
# (default gpt2-tiny; the issue's benchmark is a GPT-2 of 124M parameters,
# n_embd 768, 12 layers, micro-batch 4 x 128: bench/models/gpt2-124m.json,
# run it on a quiet machine with REPLAN_STEPS large enough to outlast its
# compile). Timings depend on the machine's load: the script prints `uptime`
# first and the load before each table.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
model="${1:-gpt2-tiny}"
bin="${2:-$root/build}/bin"
steps="${STEPS:-6}" warmup="${WARMUP:-2}" micro="${MICRO_BATCHES:-4}"
replan_steps="${REPLAN_STEPS:-1000}"
bench_work
echo "load: $(uptime)"

"$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$work/m.mlir"
"$bin/ftpipe-compile" "$work/m.mlir" --devices=2 -o "$work/a" 2> /dev/null
python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/a" 16 "$work/d.st"
run() { "$bin/ftpipe-run" "$@" --np 2 --data "$work/d.st" \
  --micro-batches "$micro" --schedule 1f1b --timeout 1200 \
  --failure-timeout 600; }

# scenario NAME [--debug-slow=R:F]: profile A, re-plan during a run of A,
# then B (the plan the re-plan took).
scenario() {
  local name="$1" w="$work/$1"
  shift
  mkdir -p "$w"
  run "$work/a" "$@" --steps "$steps" --profile-out "$w/a.json" \
    --profile-warmup "$warmup" > /dev/null 2>&1
  run "$work/a" "$@" --steps "$replan_steps" --replan auto \
    --replan-warmup "$warmup" --replan-dir "$w/replan" --trace "$w/auto.json" \
    > "$w/auto.log" 2>&1
  grep -E "^(re-plan|migrated)" "$w/auto.log" || true
  if [ ! -f "$w/replan/replan1/manifest.json" ] ||
     ! grep -q "^migrated" "$w/auto.log"; then
    echo "== $name: no plan taken in $replan_steps steps (see above)"
    return
  fi
  ln -sfn "$w/replan/replan1" "$w/b"
  run "$w/b" "$@" --steps "$steps" --profile-out "$w/b.json" \
    --profile-warmup "$warmup" > /dev/null 2>&1
  run "$w/b" "$@" --steps "$steps" --compare-simulator > "$w/b.timing" 2>&1
  echo "== $name ${*:-(no slowdown)}, load $(load)"
  python3 - "$work" "$w" <<'PY'
import json, re, statistics, sys
work, w = sys.argv[1], sys.argv[2]
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
log = open(f"{w}/auto.log").read()
moved = re.search(r"migrated .* after step ([0-9]+) .*: ([0-9.]+) s", log)
compiled = re.search(r"taken: .*compiled in ([0-9.]+) s", log) or \
    re.search(r"compiled in ([0-9.]+) s", log)
decided = re.search(r"running on the new plan after step [0-9]+, ([0-9.]+) s", log)
at = int(moved.group(1))
# Process 0's update-to-update times in the re-planning run, before and
# after the move (the move's own step left out).
updates = sorted(e["ts"] for e in json.load(open(f"{w}/auto.json"))["traceEvents"]
                 if e.get("tid") == 0 and e.get("cat") == "update")
gaps = [(b - a) / 1e3 for a, b in zip(updates, updates[1:])]
before_ms = statistics.median(gaps[1:at - 1]) if at > 2 else float("nan")
after_ms = statistics.median(gaps[at:]) if len(gaps) > at else float("nan")
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
print("re-planning run: step %.1f ms before the move (after step %d), "
      "%.1f ms after (median, process 0)" % (before_ms, at, after_ms))
print("compile %s s in the background; decision to running on B %s s "
      "(migration %s s)" % (compiled.group(1) if compiled else "?",
                            decided.group(1) if decided else "?",
                            moved.group(2)))
PY
}

scenario measured
scenario slowed --debug-slow=0:2
