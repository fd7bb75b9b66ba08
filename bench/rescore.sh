#!/usr/bin/env bash
# Scores the plans another build of ftpipe-opt makes with this build's cost
# model, objective and simulator, beside this build's own plans: when the
# costs change, "is the new plan better?" needs both plans under the same
# costs. Prints, per model, setup and method, the objective and simulated
# async ms per micro-batch, the largest bytes one device sends, and the
# weights' transposes the plan keeps apart from their matmul (a copy the
# figures leave out), for the other build's plan and for this build's.
#
#   bench/rescore.sh OTHER_FTPIPE_OPT [HARDWARE]
#
# Example (the plans of commit 1953839):
#   git worktree add /tmp/old 1953839 && cmake -S /tmp/old -B /tmp/old/build \
#     -G Ninja && ninja -C /tmp/old/build ftpipe-opt
#   bench/rescore.sh /tmp/old/build/bin/ftpipe-opt
#
# A build older than recompute=auto, replication and forwarding (e.g.
# dcf74f3, the code issue 14 was written on) plans with recomputation
# everywhere and without those options; its plan then stands beside both of
# this build's setups.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

other="$1"
hardware="${2:-rtx2080ti-pcie-x8}"
ftpipe_build --target ftpipe-opt ftpipe-model-gen >/dev/null
bin="$FTPIPE_BUILD_DIR/bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

score() { # IR OPTIMIZER RECOMPUTE -> "obj sim send_GiB apart"
  "$bin/ftpipe-opt" "$1" --ftpipe-annotate-costs="hardware=$hardware" \
    --ftpipe-report="optimizer=$2 recompute=$3 json=$work/r.json" \
    -o /dev/null >/dev/null
  python3 - "$work/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sent = max(d["sent_bytes"] for d in r["per_device"]) / 2**30
print("%9.2f %9.2f %6.2f %5d" % (r["async_ms_per_microbatch"],
      r["async_sim_ms_per_microbatch"], sent, r["weight_transposes_apart"]))
PY
}

old_options=0
"$other" --help | grep -q -- '--replicate' || old_options=1

printf '%-18s %-14s %-10s | %-34s | %-34s\n' model setup method \
  "other: obj sim send_GiB apart" "this: obj sim send_GiB apart"
for model in bert-large-uncased gpt2-xl t5-3b flan-t5-xl; do
  "$bin/ftpipe-model-gen" "$model" --quiet -o "$work/$model.mlir"
  case "$model" in
    t5-3b | flan-t5-xl) setups="adafactor:true adafactor:auto adam:true adam:auto" ;;
    *) setups="adam:true adam:auto" ;;
  esac
  for setup in $setups; do
    optimizer="${setup%:*}" recompute="${setup#*:}"
    for method in mixed-pipe seq-pipe; do
      opts="optimizer=$optimizer recompute=$recompute stashing=none microbatches=8 schedule=async replicate=true forward=true"
      "$bin/ftpipe-opt" "$work/$model.mlir" \
        --ftpipe-annotate-costs="hardware=$hardware" "--ftpipe-$method=$opts" \
        -o "$work/this.mlir"
      [ "$old_options" = 1 ] &&
        opts="optimizer=$optimizer recompute=true stashing=none microbatches=8 schedule=async"
      other_score="$(printf '%-34s' '  no plan (nothing fits)')"
      if "$other" "$work/$model.mlir" --ftpipe-annotate-costs="hardware=$hardware" \
        "--ftpipe-$method=$opts" -o "$work/other.mlir" 2>/dev/null; then
        other_score="$(score "$work/other.mlir" "$optimizer" "$recompute")"
      fi
      printf '%-18s %-14s %-10s | %s | %s\n' "$model" "$optimizer:$recompute" \
        "$method" "$other_score" \
        "$(score "$work/this.mlir" "$optimizer" "$recompute")"
    done
  done
done
