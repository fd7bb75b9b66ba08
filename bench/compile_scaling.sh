#!/usr/bin/env bash
# compile_scaling.sh [BUILD] [OTHER_BUILD] - ftpipe-compile's CPU time against
# the number of layers (not a test; issue 25).
#
# GPT-2 of width 256 (4 heads, vocabulary 8192, micro-batch 4 x 128) with 4,
# 8 and 16 layers, compiled for 2 devices; prints per build the model's ops
# (lines of tosa/tensor/arith/linalg/math ops in the generated IR) and the
# wall and CPU time (user, all threads). Compare the CPU per op across depths;
# wall times depend on the machine's load.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
builds=("${1:-$root/build}")
[ $# -ge 2 ] && builds+=("$2")
bench_work
for layers in 4 8 16; do
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
    /usr/bin/time -f "$build: layers $layers, ops $ops: wall %e s, CPU %U s" \
      "$build/bin/ftpipe-compile" "$work/g$layers.mlir" --devices=2 \
      -o "$work/out" 2>&1 | grep 'wall'
  done
done
