#!/usr/bin/env bash
# compiled_gpt2_block.sh [BUILD_DIR] - one GPT-2 124M transformer block,
# compiled, against PyTorch eager (issue 25; not a test, prints measured
# figures). Needs a build and the reference environment (BUILD/.venv-ref).
#
# Two models of GPT-2 124M's config (bench/models/gpt2-124m.json: n_embd 768,
# 12 heads, micro-batch 4 x 128) with one block: with the real vocabulary of
# 50257 (the embedding, the block, the tied 512 x 50257 logits GEMM and the
# softmax cross-entropy) and with a vocabulary of 512 (the block alone, nearly:
# its embedding and head are 1/100 of the first's). Each is compiled for one
# device without recomputation (PyTorch keeps activations too) and timed by
# compiled_bert_layer.py, forward + backward, one thread: the compiled code's
# CPU time, its system CPU time (page faults of fresh buffers), the buffers it
# takes fresh per step, its gemm calls' time in OpenBLAS, and PyTorch eager's
# CPU time on the same weights and inputs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

for vocab in 50257 512; do
  python3 - "$here/models/gpt2-124m.json" "$work/block-$vocab.json" "$vocab" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["n_layer"] = 1
config["vocab_size"] = int(sys.argv[3])
json.dump(config, open(sys.argv[2], "w"), indent=1)
PY
  "$build/bin/ftpipe-model-gen" "$work/block-$vocab.json" --loss --quiet \
    -o "$work/block-$vocab.mlir"
  nice "$build/bin/ftpipe-compile" "$work/block-$vocab.mlir" --devices=1 \
    --recompute=false -o "$work/block-$vocab" 2>/dev/null
  nice "$build/.venv-ref/bin/python" "$here/compiled_bert_layer.py" \
    "$work/block-$vocab" "$work/block-$vocab.mlir" "$work/block-$vocab.json" \
    --title "GPT-2 124M, 1 block (+ embedding, head, loss), vocabulary $vocab, 4 x 128 tokens"
done
