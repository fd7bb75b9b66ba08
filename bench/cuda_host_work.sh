#!/usr/bin/env bash
# cuda_host_work.sh [BUILD] [CONFIG] - kernel launches and synchronisations
# per call of each host function of a CUDA artifact (bench/cuda_host_work.py;
# counted from the lowered IR, no GPU needed; docs/GPU.md, "Why the layer is
# slow"). CONFIG: a Hugging Face config.json, by default the GPU bundle's
# BERT-large encoder layer (scripts/build-gpu-bundle.sh writes it), compiled
# at 4 x 384 tokens for one device with every activation kept, as the bundle
# does.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build=${1:-$root/build}
config=${2:-$root/gpu-bundle/models/bert-large-layer/config.json}
[ -f "$config" ] || { echo "cuda_host_work: no $config (scripts/build-gpu-bundle.sh)" >&2; exit 1; }
bench_work
"$build/bin/ftpipe-model-gen" "$config" --loss --seq-len=384 \
  --micro-batch-size=4 --quiet -o "$work/model.mlir"
"$build/bin/ftpipe-compile" "$work/model.mlir" --target=cuda --devices=1 -O2 \
  --recompute=false --keep-ir -o "$work/out" > /dev/null
"$build/bin/ftpipe-opt" "$work/out/device0.mlir" --ftpipe-lower-cuda=chip=sm_90 \
  --mlir-print-ir-after=ftpipe-device-copies -o /dev/null 2> "$work/host.mlir"
python3 "$root/bench/cuda_host_work.py" "$work/host.mlir"
