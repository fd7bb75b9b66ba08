#!/usr/bin/env bash
# cuda_host_work.sh [BUILD] [CONFIG] - kernel launches and synchronisations
# per call of each host function of a CUDA artifact (bench/cuda_host_work.py;
# counted from the lowered IR, no GPU needed; docs/GPU.md, "Why the layer is
# slow"). CONFIG: a Hugging Face config.json, by default the GPU bundle's
# BERT-large encoder layer (scripts/build-gpu-bundle.sh writes it), compiled
# at 4 x 384 tokens for one device with every activation kept, as the bundle
# does; then the step's device memory by the artifact's recorded peaks.
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
# The device memory of one forward + backward as run_cuda_artifacts.py runs
# it (weights and inputs resident, the forward's saved values kept until the
# backward ends): the entry points' recorded peaks (ftpipe-record-peak-memory)
# read from the artifact, which loads here without a GPU.
LD_LIBRARY_PATH="$build/lib" python3 - "$work/out" <<'PY'
import ctypes, json, math, os, sys
out = sys.argv[1]
manifest = json.load(open(os.path.join(out, "manifest.json")))
library = ctypes.CDLL(os.path.join(out, "device0.so"))
peak = {e: ctypes.c_int64.in_dll(library, "ftpipe_peak_bytes_stage0_" + e).value
        for e in ("forward", "backward")}
sizes = {"f32": 4, "i32": 4, "i64": 8, "f64": 8}
weights = manifest["device_memory"][0]["counted"]["weight_bytes"]
inputs = sum(math.prod(i["shape"]) * sizes[i["dtype"]]
             for i in manifest["inputs"].values())
kept = manifest["device_memory"][0]["inputs"]["stages"][0][
    "kept_bytes_per_microbatch"]
print("recorded peaks: forward %d B, backward %d B; kept %d B, weights %d B, "
      "inputs %d B: a step's peak %d B" % (
          peak["forward"], peak["backward"], kept, weights, inputs,
          weights + inputs + max(peak["forward"], kept + peak["backward"])))
PY
