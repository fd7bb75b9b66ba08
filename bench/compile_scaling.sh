#!/usr/bin/env bash
# compile_scaling.sh [BUILD] [OTHER_BUILD] - ftpipe-compile's CPU time against
# the number of layers (not a test; issue 25).
#
# GPT-2 of width 256 (4 heads, vocabulary 8192, micro-batch 4 x 128) with
# LAYERS layers (default "4 8 16"), compiled for 2 devices; prints per
# build and depth the model's ops (lines of tosa/tensor/arith/linalg/math
# ops in the generated IR), the wall and CPU time (user + system, all
# threads and the linker) and the CPU per op, then per build the CPU per op
# of the deepest model over the shallowest's (above 1: grows with the
# layers) and the largest over the smallest (1.00: flat). Wall
# times depend on the machine's load, CPU times much less; the load average
# is printed before each compile.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
builds=("${1:-$root/build}")
[ $# -ge 2 ] && builds+=("$2")
bench_work
declare -A perOp
for layers in ${LAYERS:-4 8 16}; do
  cat > "$work/g$layers.json" <<JSON
{"activation_function": "gelu_new", "layer_norm_epsilon": 1e-05,
 "model_type": "gpt2", "n_embd": 256, "n_head": 4, "n_inner": null,
 "n_layer": $layers, "n_positions": 128, "vocab_size": 8192,
 "ftpipe": {"micro_batch_size": 4, "seq_len": 128}}
JSON
  "${builds[0]}/bin/ftpipe-model-gen" "$work/g$layers.json" --loss --quiet \
    -o "$work/g$layers.mlir"
  ops=$(grep -cE '^ +%[^ ]+ = (tosa|tensor|arith|linalg|math)\.' \
    "$work/g$layers.mlir")
  for build in "${builds[@]}"; do
    before="$(load)"
    /usr/bin/time -f "%e %U %S" -o "$work/time" \
      "$build/bin/ftpipe-compile" "$work/g$layers.mlir" --devices=2 \
      -o "$work/out" 2> /dev/null
    read -r wall user sys < "$work/time"
    ms=$(echo "($user + $sys) * 1000 / $ops" | bc -l)
    perOp["$build"]+="$ms "
    printf '%s: layers %d, ops %d: wall %s s, CPU %s + %s s, %.1f ms per op (load %s)\n' \
      "$build" "$layers" "$ops" "$wall" "$user" "$sys" "$ms" "$before"
    rm -rf "$work/out"
  done
done
for build in "${builds[@]}"; do
  echo "${perOp[$build]}" | tr ' ' '\n' | grep . |
    awk -v build="$build" 'NR == 1 { first = $1; low = $1; high = $1 }
      { last = $1; low = $1 < low ? $1 : low; high = $1 > high ? $1 : high }
      END { printf "%s: CPU per op, deepest / shallowest %.2f, largest / smallest %.2f\n", build, last / first, high / low }'
done
