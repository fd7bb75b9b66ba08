#!/usr/bin/env bash
# runtime_schedules.sh [BUILD] - ftpipe-run against the simulator (not a test).
#
# Compiles a small BERT (4 layers, hidden 256, 4 x 128 tokens per
# micro-batch) for 2 devices under a Mixed-Pipe plan with 3 stages (two on
# one device), trains it for 6 steps of 4 micro-batches with each schedule
# on 2 MPI processes (zb-h1 and zb-auto with split backwards: the simulator
# gets I's and W's measured costs), and prints what `ftpipe-run --compare-simulator`
# measured: time per micro-batch and idle share, the simulator's prediction
# for the same action lists with the per-stage costs measured in the run,
# their ratio, and the runtime's own overhead. One process per core: run it
# on a quiet machine with at least 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="${1:-$root/build}"
bin="$build/bin"
bench_work

cat > "$work/bert-bench.json" <<'JSON'
{"model_type": "bert", "hidden_act": "gelu", "hidden_size": 256,
 "intermediate_size": 1024, "layer_norm_eps": 1e-12,
 "max_position_embeddings": 128, "num_attention_heads": 4,
 "num_hidden_layers": 4, "type_vocab_size": 2, "vocab_size": 8192,
 "ftpipe": {"micro_batch_size": 4, "seq_len": 128}}
JSON
"$bin/ftpipe-model-gen" "$work/bert-bench.json" --loss --quiet -o "$work/bert.mlir"
"$bin/ftpipe-opt" "$work/bert.mlir" --mlir-print-debuginfo -o "$work/plan.mlir" \
  --pass-pipeline='builtin.module(ftpipe-mixed-pipe-pipeline{devices=2 stages=3})'
"$bin/ftpipe-compile" "$work/plan.mlir" --devices=2 -o "$work/bert" 2> "$work/compile.log"
python3 "$root/test/Runtime/Inputs/make-dataset.py" "$work/bert" 64 "$work/data.safetensors"
PYTHONPATH="$root/tools/ftpipe-compile" python3 -c "import ftpipe_manifest, sys; s = ftpipe_manifest.stages(ftpipe_manifest.load(sys.argv[1])); print('plan: stages on devices', [s[i]['device'] for i in sorted(s)])" "$work/bert"
echo "machine: $(nproc) cores, load $(load)"
for schedule in gpipe 1f1b async zb-h1 zb-auto; do
  echo "== $schedule"
  "$bin/ftpipe-run" "$work/bert" --np 2 --data "$work/data.safetensors" --seed 1 \
    --steps 6 --micro-batches 4 --schedule "$schedule" --stashing none \
    --compare-simulator 2> /dev/null | grep -v '^step'
done
