#!/usr/bin/env bash
# build-gpu-bundle.sh - builds the folder that travels to a lent GPU machine
# (docs/GPU.md): everything scripts/gpu-check.sh runs there, where there is a
# CUDA driver and Python (numpy, safetensors, PyTorch) but no LLVM, MLIR, MPI
# or toolkit libraries of ours.
#
#   scripts/build-gpu-bundle.sh [-B BUILD] [-o OUT] [--models "M ..."]
#                               [--no-bert-large] [--no-reference]
#                               [--no-two-devices]
#
# OUT (default gpu-bundle/ in the checkout, ignored by git) holds:
#   lib/      libFTPipeCUDARuntime.so, libFTPipeStageABI.so and the CUDA
#             runtime libcudart.so.13 they link (cuBLAS, 600 MB, is not
#             carried: gpu-check.sh takes the GPU machine's, from its CUDA 13
#             toolkit or PyTorch's nvidia-cublas wheel);
#   models/M/ for each tiny model (default bert-tiny gpt2-tiny t5-tiny
#             llama-tiny): the CUDA artifact of the whole model on one device
#             (--target=cuda --cuda-chip=sm_90 --devices=1), weights.safetensors
#             and inputs.safetensors (hf_reference.py reference, seed 11), and
#             expected.safetensors: loss and every gradient from Hugging Face
#             transformers' loss.backward() on this machine's CPU, f32
#             (stage_programs.py hf-grads, the reference environment);
#   models/M/train/ for the tiny BERT, GPT-2 (tied embeddings) and T5, and
#             bert-tiny-2dev and gpt2-tiny-keep: 10 training steps of 4
#             micro-batches of 2 samples, AdamW lr 1e-4
#             (test/Reference/train-tiny-models.test's setup):
#             weights.safetensors and data.safetensors
#             (train_reference.py init, 24 samples, the seeds of
#             train-tiny-models.test),
#             expected.safetensors and expected.log (train_reference.py
#             train: PyTorch on this machine's CPU, f32), schedule-gpipe.txt
#             and schedule-1f1b.txt (the schedule model's action lists,
#             ftpipe-run --print-schedule), train.json (the setup and the
#             tensors whose gradient is zero in exact arithmetic);
#   models/gpt2-tiny-keep/: the tiny GPT-2 with --recompute=false (saved
#             values cross from forward to backward on the device);
#   models/bert-tiny-2dev/: the tiny BERT for two devices (several stages
#             on one GPU), with bert-tiny's weights, inputs and expected
#             results (unless --no-two-devices);
#   models/bert-large-layer/: one BERT-large encoder layer (hidden 1024, 16
#             heads, FFN 4096) at 4 x 384 tokens with a 128-token vocabulary
#             and the QA head (a loss): its artifact, config.json and
#             inputs.safetensors (no weights: 50 MB; gpu-check.sh takes
#             PyTorch's initialisation there and feeds both sides the same),
#             and in keep/ the layer compiled with --recompute=false;
#   tests/    FTPipeDeviceTests (the unit tests that need a GPU: the device
#             optimizers against PyTorch) and the optimizer-reference.json
#             it reads;
#   run_cuda_artifacts.py, train_cuda_artifacts.py, schedule_order.py,
#             bert_large_layer.py, memref_abi.py, train_reference.py,
#             hf_reference.py, gpu-check.sh,
#             BUNDLE.json (what was built, from which commit, sizes).
# Fails if OUT exceeds 64 MiB. Needs a build with the CUDA toolkit and,
# unless --no-reference, the reference environment (BUILD/.venv-ref).
# Takes minutes (one CUDA compilation per model; see docs/GPU.md), so it is
# no part of the default build or CI; test/Compile/gpu-bundle.mlir builds a
# one-model bundle with --no-reference --no-bert-large.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
out=$root/gpu-bundle
models="bert-tiny gpt2-tiny t5-tiny llama-tiny"
large=1
reference=1
two=1
while [ $# -gt 0 ]; do
  case $1 in
    -B) build=$(cd "$2" && pwd); shift 2 ;;
    -o) out=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --no-bert-large) large=0; shift ;;
    --no-reference) reference=0; shift ;;
    --no-two-devices) two=0; shift ;;
    *) echo "build-gpu-bundle: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

bin=$build/bin
runtime=$build/lib/libFTPipeCUDARuntime.so
if [ ! -f "$runtime" ]; then
  echo "build-gpu-bundle: $runtime is missing: configure $build with the" \
       "CUDA toolkit and build FTPipeCUDARuntime" >&2
  exit 1
fi
tests=$build/bin/FTPipeDeviceTests
if [ ! -x "$tests" ]; then
  echo "build-gpu-bundle: $tests is missing: build FTPipeDeviceTests" >&2
  exit 1
fi
python=$build/.venv-ref/bin/python
if [ $reference = 1 ] && [ ! -x "$python" ]; then
  echo "build-gpu-bundle: no reference environment at $build/.venv-ref" \
       "(scripts/setup-reference-env.sh), or pass --no-reference" >&2
  exit 1
fi
export FTPIPE_BUILD=$build

start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out/lib" "$out/models" "$out/tests"

cp "$runtime" "$build/lib/libFTPipeStageABI.so" "$out/lib/"
cudart=$(ldd "$runtime" | awk '/libcudart\.so/ {print $3}')
cp -L "$cudart" "$out/lib/$(basename "$cudart")"
cp "$tests" "$root/unittests/Runtime/optimizer-reference.json" "$out/tests/"
cp "$root/scripts/gpu/run_cuda_artifacts.py" \
   "$root/scripts/gpu/train_cuda_artifacts.py" \
   "$root/scripts/gpu/schedule_order.py" \
   "$root/scripts/gpu/bert_large_layer.py" \
   "$root/tools/ftpipe-reference/memref_abi.py" \
   "$root/tools/ftpipe-reference/train_reference.py" \
   "$root/tools/ftpipe-reference/hf_reference.py" \
   "$root/scripts/gpu-check.sh" "$out/"

compile() {  # compile NAME MLIR OPT DEVICES [FLAGS...]
  local name=$1 mlir=$2 opt=$3 devices=$4
  shift 4
  "$bin/ftpipe-compile" "$mlir" --target=cuda --cuda-chip=sm_90 \
    "--devices=$devices" "-O$opt" "$@" -o "$out/models/$name" \
    > "$tmp/${name//\//-}.compile.log" 2>&1 || {
    cat "$tmp/${name//\//-}.compile.log" >&2; exit 1; }
}

# The schedule model's action lists for DIR (GPipe and 1F1B with flush, 10
# steps of 4 micro-batches) into DIR/train/ (ftpipe-run plans a CUDA
# artifact's schedule without loading its device code).
schedules() {  # schedules DIR
  for schedule in gpipe 1f1b; do
    "$bin/ftpipe-run" "$1" --schedule $schedule --steps 10 \
      --micro-batches 4 --print-schedule > "$1/train/schedule-$schedule.txt"
  done
}

# 10 training steps of MODEL (MLIR) by PyTorch on the CPU into DIR/train/:
# the weights, the data, the expected weights and losses, the setup.
training() {  # training MODEL MLIR DIR
  local train=$3/train zero seed
  mkdir -p "$train"
  # test/Reference/train-tiny-models.test's seeds, whose runs ftpipe-run
  # reproduces on the CPU within the tolerance (with others, an element of
  # small gradient can reach it on the CPU already: seed 11 gave 1.06e-4 on
  # BERT), and the tensors of zero gradient it names: the attention key
  # biases, the QA head's bias, the last LayerNorm bias (BERT), GPT-2's key
  # biases.
  case $1 in
    bert-tiny) seed=1 zero='["key\\.bias", "qa_outputs\\.bias", "layer\\.1\\.output\\.LayerNorm\\.bias"]' ;;
    gpt2-tiny) seed=2 zero='["c_attn\\.bias:64:128"]' ;;
    t5-tiny) seed=3 zero='[]' ;;
  esac
  "$python" "$root/tools/ftpipe-reference/train_reference.py" init "$2" \
    "$root/models/$1.json" --seed $seed --samples 24 \
    --weights "$train/weights.safetensors" --data "$train/data.safetensors" \
    > /dev/null
  "$python" "$root/tools/ftpipe-reference/train_reference.py" train \
    "$root/models/$1.json" --weights "$train/weights.safetensors" \
    --data "$train/data.safetensors" --steps 10 --micro-batches 4 \
    --micro-batch-size 2 --lr 1e-4 -o "$train/expected.safetensors" \
    > "$train/expected.log"
  # The bound of a zero-gradient element: 2 x 10 steps x lr.
  echo "{\"steps\": 10, \"microbatches\": 4, \"micro_batch_size\": 2," \
       "\"lr\": 1e-4, \"bound\": 2e-3, \"zero_gradient\": $zero}" \
    > "$train/train.json"
  schedules "$3"
}

for model in $models; do
  t0=$(date +%s)
  "$bin/ftpipe-model-gen" "$model" --loss --quiet -o "$tmp/$model.mlir"
  compile "$model" "$tmp/$model.mlir" 1 1
  if [ $reference = 1 ]; then
    dir=$out/models/$model
    "$python" "$root/tools/ftpipe-reference/hf_reference.py" reference \
      "$tmp/$model.mlir" "$root/models/$model.json" --seed 11 \
      --weights "$dir/weights.safetensors" --inputs "$dir/inputs.safetensors" \
      --outputs "$tmp/$model.hf" > /dev/null
    "$python" "$root/tools/ftpipe-reference/stage_programs.py" hf-grads \
      "$tmp/$model.mlir" "$root/models/$model.json" \
      --weights "$dir/weights.safetensors" --inputs "$dir/inputs.safetensors" \
      -o "$dir/expected.safetensors" > /dev/null
    case $model in
      bert-tiny|gpt2-tiny|t5-tiny) training "$model" "$tmp/$model.mlir" "$dir" ;;
    esac
  fi
  echo "build-gpu-bundle: $model in $(( $(date +%s) - t0 )) s"
done

# variant NAME BASE DEVICES [FLAGS...]: BASE's model compiled again (for
# DEVICES, with FLAGS), with BASE's weights, inputs, expected results and
# training, and the schedules of its own plan.
variant() {
  local name=$1 base=$2 devices=$3 t0
  shift 3
  t0=$(date +%s)
  compile "$name" "$tmp/$base.mlir" 1 "$devices" "$@"
  for f in weights inputs expected; do
    if [ -f "$out/models/$base/$f.safetensors" ]; then
      cp "$out/models/$base/$f.safetensors" "$out/models/$name/"
    fi
  done
  if [ -d "$out/models/$base/train" ]; then
    cp -r "$out/models/$base/train" "$out/models/$name/"
    schedules "$out/models/$name"
  fi
  models="$models $name"
  echo "build-gpu-bundle: $name in $(( $(date +%s) - t0 )) s"
}

# Several stages on one GPU: the tiny BERT for two devices, run in turn over
# the in-process mailbox (its transfers staged through host memory), against
# the same expected results and training.
if [ $two = 1 ] && [[ " $models " == *" bert-tiny "* ]]; then
  variant bert-tiny-2dev bert-tiny 2
fi

# The CUDA target recomputes every forward by default (FTPipe's setup); the
# tiny GPT-2 (tied weights) again with every activation kept, so values saved
# by a forward cross to its backward in device memory (a GPipe training step
# holds four micro-batches' saved values there).
if [[ " $models " == *" gpt2-tiny "* ]]; then
  variant gpt2-tiny-keep gpt2-tiny 1 --recompute=false
fi

if [ $large = 1 ]; then
  t0=$(date +%s)
  dir=$out/models/bert-large-layer
  python3 - "$root/models/bert-large-uncased.json" "$tmp/bert-large-layer.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
# One encoder layer at BERT-large's sizes; a small vocabulary keeps the
# embeddings (not the subject) out of the way.
config.update(num_hidden_layers=1, vocab_size=128,
              max_position_embeddings=384,
              architectures=["BertForQuestionAnswering"])
json.dump(config, open(sys.argv[2], "w"), indent=1)
PY
  "$bin/ftpipe-model-gen" "$tmp/bert-large-layer.json" --loss --seq-len=384 \
    --micro-batch-size=4 --quiet -o "$tmp/bert-large-layer.mlir"
  compile bert-large-layer "$tmp/bert-large-layer.mlir" 2 1
  cp "$tmp/bert-large-layer.json" "$dir/config.json"
  # The same layer with every activation kept (no recomputation), as PyTorch
  # eager runs it; bert_large_layer.py times both.
  compile bert-large-layer/keep "$tmp/bert-large-layer.mlir" 2 1 \
    --recompute=false
  if [ $reference = 1 ]; then
    "$python" "$root/tools/ftpipe-reference/hf_reference.py" reference \
      "$tmp/bert-large-layer.mlir" "$tmp/bert-large-layer.json" --seed 11 \
      --weights "$tmp/bert-large.w" --inputs "$dir/inputs.safetensors" \
      --outputs "$tmp/bert-large.hf" > /dev/null
  fi
  echo "build-gpu-bundle: bert-large-layer in $(( $(date +%s) - t0 )) s"
fi

bytes=$(du -sb "$out" | cut -f1)
all=$models
[ $large = 1 ] && all="$all bert-large-layer"
python3 - "$out/BUNDLE.json" "$bytes" "$reference" \
  "$(git -C "$root" rev-parse HEAD)" $all <<'PY'
import json, sys
path, size, reference, commit, models = sys.argv[1], int(sys.argv[2]), \
    sys.argv[3] == "1", sys.argv[4], sys.argv[5:]
json.dump({"models": models, "expected": reference, "chip": "sm_90",
           "bytes": size, "commit": commit}, open(path, "w"), indent=1)
PY
limit=$((64 * 1024 * 1024))
echo "build-gpu-bundle: $out, $bytes bytes, $(( $(date +%s) - start )) s"
if [ "$bytes" -ge $limit ]; then
  echo "build-gpu-bundle: $bytes bytes exceed the 64 MiB that travels" >&2
  exit 1
fi
