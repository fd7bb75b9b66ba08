#!/usr/bin/env bash
# compiled_bert_layer.sh - the compile benchmarks of docs/Compile.md (not a
# test; prints measured figures). Needs a build (ftpipe-compile) and, for the
# run against PyTorch, the reference environment:
#
#   bench/compiled_bert_layer.sh [BUILD_DIR [guards]]
#
# 1. ftpipe-compile of BERT-large (24 layers, 4 x 384 tokens) for 8 devices
#    (devices in parallel, one per hardware thread): wall and CPU time of the
#    whole command, and the load average before it.
# 2. One BERT-large encoder layer compiled for one device, forward + backward,
#    activations kept (no recomputation, as in PyTorch), against its
#    contractions on OpenBLAS and PyTorch eager (compiled_bert_layer.py), one
#    thread each, in CPU time.
# With `guards`, instead of 1 and 2: the cost of the index guards
# (docs/Robustness.md). The layer of 2 compiled as usual and with
# --index-guards=false, both run alternately in one process
# (index_guard_cost.py, REPEATS pairs, default 10), in CPU and wall time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

mode="${2:-}"
if [[ $mode != guards ]]; then
  "$build/bin/ftpipe-model-gen" bert-large-uncased --loss --quiet \
    -o "$work/bert-large.mlir"
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "ftpipe-compile bert-large-uncased --devices=8 (cpu): %e s \
wall, %U s user + %S s system CPU; load average before: $load" \
    nice "$build/bin/ftpipe-compile" "$work/bert-large.mlir" --devices=8 \
    -o "$work/bert-large" 2>&1 | grep -v '^ftpipe-compile: '
fi

python3 - "$here/../models/bert-large-uncased.json" "$work/layer.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["num_hidden_layers"] = 1
json.dump(config, open(sys.argv[2], "w"), indent=1)
PY
"$build/bin/ftpipe-model-gen" "$work/layer.json" --loss --seq-len=384 \
  --micro-batch-size=4 --quiet -o "$work/layer.mlir"
# Activations kept for backward (--recompute=false), as PyTorch does.
nice "$build/bin/ftpipe-compile" "$work/layer.mlir" --devices=1 \
  --recompute=false ${mode:+--keep-ir} -o "$work/layer" 2>/dev/null
if [[ $mode == guards ]]; then
  nice "$build/bin/ftpipe-compile" "$work/layer.mlir" --devices=1 \
    --recompute=false --index-guards=false --keep-ir -o "$work/bare" \
    2>/dev/null
  for variant in layer bare; do
    echo "$variant: $(grep -c 'tosa.clamp.*ftpipe.index_guard' \
      "$work/$variant/device0.mlir") index guards," \
      "$(nm -D --undefined-only "$work/$variant/device0.so" |
        grep -c ftpipe_rt_index_error) call(s) of the trap's symbol"
  done
  nice "$build/.venv-ref/bin/python" "$here/index_guard_cost.py" \
    "$work/layer" "$work/bare" "$work/layer.mlir" "$work/layer.json" \
    --repeats "${REPEATS:-10}"
  exit
fi
nice "$build/.venv-ref/bin/python" "$here/compiled_bert_layer.py" \
  "$work/layer" "$work/layer.mlir" "$work/layer.json"
