#!/usr/bin/env bash
# compile_time.sh [BUILD] [OTHER_BUILD] - the issue's compile-time targets
# (issue 25; not a test): `ftpipe-compile` of GPT-2 124M for 2 devices
# (bench/models/gpt2-124m.json with the peer benchmark's flags: AdamW, 4
# micro-batches, the default --recompute, which is auto on the CPU: no
# recomputation on this machine's plans; target under 20 s), the same with
# --recompute=true, and T5-3B for 8 devices (target under 120 s), per build.
# Prints each compile's wall time, CPU time (user + system, all threads and
# the linker), peak resident memory and its slowest device's steps, with the
# load average before and after: wall times depend on the load, CPU times
# much less (docs/Benchmarks.md, "Compile time").
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
builds=("${1:-$root/build}")
[ $# -ge 2 ] && builds+=("$2")
bench_work
gen="${builds[0]}/bin/ftpipe-model-gen"
"$gen" "$root/bench/models/gpt2-124m.json" --loss --quiet -o "$work/gpt2.mlir"
"$gen" t5-3b --loss --quiet -o "$work/t5.mlir"

# timed NAME BUILD MODEL ARGS...: one compile, one line of figures.
timed() {
  local name="$1" build="$2" model="$3"
  shift 3
  local before
  before="$(load)"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" \
    "$build/bin/ftpipe-compile" "$model" -o "$work/out" "$@" \
    2> "$work/log"
  read -r wall user sys rss < "$work/time"
  echo "$name, $build: wall $wall s, CPU $user + $sys s, peak resident" \
    "$((rss / 1024)) MiB; load $before before, $(load) after"
  # The slowest lowering and the slowest object emission (wall).
  for step in lower emit; do
    grep -E "device [0-9]+: $step" "$work/log" | sort -t: -k4 -g | tail -1 |
      sed 's/^ftpipe-compile: /    slowest: /'
  done
  rm -rf "$work/out"
}

for build in "${builds[@]}"; do
  timed "GPT-2 124M, 2 devices" "$build" "$work/gpt2.mlir" --devices=2 \
    --optimizer=adamw --microbatches=4
  timed "GPT-2 124M, 2 devices, --recompute=true" "$build" "$work/gpt2.mlir" \
    --devices=2 --optimizer=adamw --microbatches=4 --recompute=true
  timed "T5-3B, 8 devices" "$build" "$work/t5.mlir" --devices=8
done
