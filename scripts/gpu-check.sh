#!/usr/bin/env bash
# gpu-check.sh - the one check of FTPipe's CUDA path on a lent GPU machine
# (docs/GPU.md), run from the bundle of scripts/build-gpu-bundle.sh:
#
#   bash gpu-bundle/gpu-check.sh [--dry] [--bundle DIR]
#
# On the GPU (budget: under 8 minutes; each step has its own time limit):
#   1. the GPU, its driver, PyTorch's version, where cuBLAS 13 comes from;
#      the unit tests that need a GPU (tests/FTPipeDeviceTests: the device
#      optimizers against PyTorch's trajectories): passed, failed or skipped
#      (a skip is no pass);
#   2. per tiny model (BERT, GPT-2, T5, LLaMA): one micro-batch forward and
#      backward of its CUDA artifact (run_cuda_artifacts.py), loss and every
#      gradient against the reference computed on the build machine's CPU
#      (f32, 1e-4 relative; cuBLAS in its default math mode: no TF32), and
#      the peak device memory; bert-tiny-2dev: the tiny BERT for two devices
#      run in turn on the one GPU (several stages on one GPU, transfers
#      staged through host memory), against the same expected results;
#   3. the BERT-large encoder layer (4 x 384 tokens): forward + backward time
#      against PyTorch eager on the same GPU (f32, TF32 off, both warmed up,
#      medians of 20 steps timed with CUDA events), the floor from its FLOPs
#      and bytes, both peaks of device memory (bert_large_layer.py);
#   4. per model with a train/ folder (the tiny BERT, GPT-2 with its tied
#      embeddings, T5, bert-tiny-2dev, gpt2-tiny-keep): 10 training steps of 4 micro-batches in
#      GPipe's order and in 1F1B's (the schedule model's lists), gradients
#      summed on the device, AdamW by the device optimizer
#      (train_cuda_artifacts.py), against PyTorch's run on the build
#      machine's CPU: each step's loss and the final weights at 1e-4
#      relative (train_reference.py weights: per tensor, against its largest
#      value; the elements of zero gradient in exact arithmetic within the
#      bound of train.json instead);
#   5. the tiny BERT once more under compute-sanitizer's memcheck, where the
#      tool is there (its full output in $OUT/sanitizer.log).
# The steps share a budget (GPU_CHECK_BUDGET, 450 s by default: the table
# comes within the 8 minutes): each runs under the smaller of its own limit
# and what is left, and a step with under 20 s left is reported "not run".
# The full log goes to $OUT/gpu-check.log (or ./gpu-check.log without OUT),
# the BERT-large figures to $OUT/bert-large-layer.json, and a table last.
#
# --dry (no GPU needed): says what it would run and checks the bundle: its
# files, its size (under 64 MiB), and that every library and executable it
# loads is in its lib/ or is libc, libm, libstdc++, libgcc_s, the dynamic
# loader, or cuBLAS 13 (600 MB, taken from the GPU machine: its CUDA 13
# toolkit or PyTorch's nvidia-cublas wheel), under `ldd` in a clean
# environment; where cuBLAS 13 is found it runs FTPipeDeviceTests too (here:
# skipped, no GPU). Exit status 1 if the bundle is incomplete or not
# self-contained.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bundle=$here
[ -f "$bundle/BUNDLE.json" ] || bundle=$(cd "$here/.." && pwd)/gpu-bundle
dry=0
while [ $# -gt 0 ]; do
  case $1 in
    --dry) dry=1; shift ;;
    --bundle) bundle=$(cd "$2" && pwd); shift 2 ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=${OUT:-$PWD}
mkdir -p "$out"
log=$out/gpu-check.log
: > "$log"
say() { echo "$@" | tee -a "$log"; }
rows=()
row() { rows+=("$(printf '%-34s %-8s %s' "$1" "$2" "$3")"); }

if [ ! -f "$bundle/BUNDLE.json" ]; then
  say "gpu-check: no bundle at $bundle (scripts/build-gpu-bundle.sh)"
  exit 1
fi
models=$(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['models']))" "$bundle/BUNDLE.json")
expected=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['expected']))" "$bundle/BUNDLE.json")
say "gpu-check: bundle $bundle: $models"

# --- the bundle: files, size, self-containment -----------------------------
failures=0
fail() { say "gpu-check: FAIL: $*"; failures=$((failures + 1)); }
for lib in libFTPipeCUDARuntime.so libFTPipeStageABI.so; do
  [ -f "$bundle/lib/$lib" ] || fail "lib/$lib is missing"
done
ls "$bundle"/lib/libcudart.so.* > /dev/null 2>&1 || fail "lib/libcudart.so.* is missing"
for f in FTPipeDeviceTests optimizer-reference.json; do
  [ -f "$bundle/tests/$f" ] || fail "tests/$f is missing"
done
for model in $models; do
  dir=$bundle/models/$model
  [ -f "$dir/manifest.json" ] && [ -f "$dir/device0.so" ] ||
    { fail "$model: no artifact"; continue; }
  grep -q '"memory": "cuda-device"' "$dir/manifest.json" ||
    fail "$model: the manifest does not say cuda-device memory"
  [ -f "$dir/inputs.safetensors" ] || [ "$expected" = 0 ] ||
    fail "$model: no inputs"
  if [ "$model" != bert-large-layer ] && [ "$expected" = 1 ]; then
    for f in weights expected; do
      [ -f "$dir/$f.safetensors" ] || fail "$model: no $f.safetensors"
    done
  fi
done
bytes=$(du -sb "$bundle" | cut -f1)
if [ "$bytes" -lt $((64 * 1024 * 1024)) ]; then
  say "gpu-check: bundle size $bytes bytes (limit 67108864)"
else
  fail "bundle size $bytes bytes exceeds 64 MiB"
fi
allowed='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libdl\.so|libpthread\.so|librt\.so)'
external='^(libcublas\.so\.13|libcublasLt\.so\.13)'
while IFS= read -r so; do
  while IFS= read -r line; do
    name=$(echo "$line" | awk '{print $1}')
    path=$(echo "$line" | awk '/=>/ {print $3}')
    [ -n "$name" ] || continue
    if [[ $name =~ $allowed ]] || [[ $name == /* && $name =~ ld-linux ]]; then
      continue
    elif [[ $name =~ $external ]]; then
      continue
    elif [[ $path == "$bundle"/lib/* ]]; then
      continue
    else
      fail "$(basename "$so") needs $name (${path:-not found}), neither in the bundle nor allowed"
    fi
  done < <(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$bundle/lib" ldd "$so" 2>&1)
done < <(find "$bundle" -name '*.so' -o -name '*.so.*' -o -path '*/tests/FTPipeDeviceTests' | sort)
[ $failures = 0 ] && say "gpu-check: bundle self-contained (ldd, clean environment): every library is in lib/ or is libc/libm/libstdc++/libgcc_s/the loader, and cuBLAS 13 from the GPU machine"
for model in $models; do
  train=$bundle/models/$model/train
  [ -d "$train" ] || continue
  for f in weights.safetensors data.safetensors expected.safetensors \
      expected.log train.json schedule-gpipe.txt schedule-1f1b.txt; do
    [ -f "$train/$f" ] || fail "$model: no train/$f"
  done
done
for script in run_cuda_artifacts.py train_cuda_artifacts.py schedule_order.py \
    bert_large_layer.py memref_abi.py train_reference.py hf_reference.py; do
  python3 -m py_compile "$bundle/$script" 2>> "$log" || fail "$script does not compile"
done

# The directory of this machine's libcublas.so.13 (its toolkit's or
# PyTorch's nvidia-cublas wheel's), or nothing.
find_cublas() {
  local dir found
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
      $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    found=$(find -L "$dir" -maxdepth 4 -name 'libcublas.so.13*' 2>/dev/null | head -1)
    if [ -n "$found" ]; then dirname "$found"; return; fi
  done
}

# FTPipeDeviceTests (LD_LIBRARY_PATH set): a row saying passed, failed or
# skipped, with GoogleTest's counts; its output goes to the log.
device_tests() {
  local result status count
  result=$(FTPIPE_OPTIMIZER_REFERENCE=$bundle/tests/optimizer-reference.json \
    timeout 120 "$bundle/tests/FTPipeDeviceTests" 2>&1)
  status=$?
  echo "$result" >> "$log"
  count() { echo "$result" | sed -n "s/^\[  $1 *\] \([0-9]*\) tests\{0,1\}[.,].*/\1/p" | head -1; }
  local passed skipped failed
  passed=$(count PASSED) skipped=$(count SKIPPED) failed=$(count FAILED)
  local name="device optimizers vs PyTorch"
  if [ $status != 0 ] || [ -n "$failed" ]; then
    row "$name" "FAIL" "exit $status, ${failed:-?} failed, ${passed:-0} passed (FTPipeDeviceTests; see log)"
  elif [ -n "$skipped" ]; then
    row "$name" "skipped" "$skipped skipped, ${passed:-0} passed: $(echo "$result" | grep -m1 -o 'no CUDA device[^"]*' || echo 'see log')"
  else
    row "$name" "passed" "${passed:-?} tests (FTPipeDeviceTests)"
  fi
  say "gpu-check: FTPipeDeviceTests: ${rows[-1]}"
}

if [ $dry = 1 ]; then
  cublas=$(find_cublas)
  if [ -n "$cublas" ]; then
    LD_LIBRARY_PATH=$bundle/lib:$cublas device_tests
  else
    say "gpu-check: FTPipeDeviceTests not run here: no libcublas.so.13"
  fi
  say "gpu-check: dry mode: on a GPU this would run"
  say "  tests/FTPipeDeviceTests: the device optimizers against PyTorch's trajectories"
  for model in $models; do
    if [ "$model" = bert-large-layer ]; then
      say "  bert_large_layer.py: ours vs PyTorch eager, fwd+bwd, medians of 20 (CUDA events), floor, peaks"
    else
      say "  run_cuda_artifacts.py models/$model: one micro-batch, loss + gradients vs expected.safetensors at 1e-4"
    fi
    if [ -d "$bundle/models/$model/train" ]; then
      say "  train_cuda_artifacts.py models/$model: 10 steps GPipe and 1F1B, device AdamW, losses + weights vs PyTorch at 1e-4"
    fi
  done
  ls -d "$bundle"/models/*/train > /dev/null 2>&1 ||
    say "  10 GPipe / 1F1B training steps: not run (no model has train/: built without the reference)"
  if [ $failures = 0 ]; then say "gpu-check: dry run ok"; else say "gpu-check: dry run: $failures failures"; fi
  [ $failures = 0 ]
  exit
fi
[ $failures = 0 ] || { say "gpu-check: the bundle is broken; stopping"; exit 1; }

# --- on the GPU -------------------------------------------------------------
start=$(date +%s)
budget=${GPU_CHECK_BUDGET:-450}
# The time limit of a step whose own is $1: that, or what is left of the
# budget; 0 when under 20 s are left.
limit() {
  local left=$((start + budget - $(date +%s)))
  if [ $left -lt 20 ]; then echo 0; elif [ $left -lt "$1" ]; then echo $left; else echo "$1"; fi
}
spent="the budget of $budget s is spent (GPU_CHECK_BUDGET)"
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
say "gpu-check: GPU: $gpu"
row "GPU, driver, memory" "info" "$gpu"
say "gpu-check: $(python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1)"
cublas=$(find_cublas)
[ -n "$cublas" ] || { say "gpu-check: no libcublas.so.13 on this machine"; exit 1; }
say "gpu-check: cuBLAS 13 from $cublas; NVIDIA_TF32_OVERRIDE=${NVIDIA_TF32_OVERRIDE:-unset} (cuBLAS default math: no TF32)"
export LD_LIBRARY_PATH=$bundle/lib:$cublas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# A crash in an artifact prints the Python stack: which entry point died.
export PYTHONFAULTHANDLER=1
device_tests

for model in $models; do
  [ "$model" = bert-large-layer ] && continue
  dir=$bundle/models/$model
  say "gpu-check: $model"
  t=$(limit 60)
  [ "$t" = 0 ] && { row "$model loss+grads (f32, 1e-4)" "not run" "$spent"; continue; }
  result=$(timeout "$t" python3 "$bundle/run_cuda_artifacts.py" "$dir" \
    --weights "$dir/weights.safetensors" --inputs "$dir/inputs.safetensors" \
    --expected "$dir/expected.safetensors" --rtol 1e-4 2>&1)
  status=$?
  echo "$result" >> "$log"
  line=$(echo "$result" | grep 'max rel. error' | sed 's/run_cuda_artifacts: //')
  peak=$(echo "$result" | grep -o 'peak device memory [0-9]* bytes')
  if [ $status = 0 ]; then row "$model loss+grads (f32, 1e-4)" "ok" "$line; $peak"
  else row "$model loss+grads (f32, 1e-4)" "FAIL" "${line:-exit $status, see log}"; fi
done
trained=0
for model in $models; do
  dir=$bundle/models/$model
  train=$dir/train
  [ -d "$train" ] || continue
  trained=1
  setup=$(python3 -c "import json, sys; t = json.load(open(sys.argv[1])); print(t['micro_batch_size'], t['lr'], t['bound'], ' '.join('--zero-gradient=' + z for z in t['zero_gradient']))" "$train/train.json")
  read -r batch lr bound zero <<< "$setup"
  for schedule in gpipe 1f1b; do
    say "gpu-check: $model: 10 steps, $schedule"
    ours=$out/$model.$schedule.safetensors
    t=$(limit 150)
    [ "$t" = 0 ] && { row "$model 10 steps $schedule" "not run" "$spent"; continue; }
    timeout "$t" python3 "$bundle/train_cuda_artifacts.py" "$dir" \
      --weights "$train/weights.safetensors" --data "$train/data.safetensors" \
      --schedule "$train/schedule-$schedule.txt" --micro-batch-size "$batch" \
      --lr "$lr" --losses "$train/expected.log" --rtol 1e-4 -o "$ours" \
      > "$out/$model.$schedule.log" 2> "$out/$model.$schedule.err"
    status=$?
    cat "$out/$model.$schedule.log" >> "$log"
    # The actions' progress: the last lines say where a failure happened.
    tail -5 "$out/$model.$schedule.err" >> "$log"
    losses=$(grep -o 'losses vs the reference: .*' "$out/$model.$schedule.log")
    peak=$(grep -o 'peak device memory [0-9]* bytes' "$out/$model.$schedule.log")
    if [ $status != 0 ]; then
      row "$model 10 steps $schedule" "FAIL" "${losses:-exit $status, see log}"
      continue
    fi
    # shellcheck disable=SC2086
    weights=$(timeout 60 python3 "$bundle/train_reference.py" weights "$ours" \
      "$train/expected.safetensors" --initial "$train/weights.safetensors" \
      --rtol 1e-4 --bound "$bound" $zero 2>&1)
    status=$?
    echo "$weights" >> "$log"
    worst=$(echo "$weights" | grep -o 'max rel. error [0-9.e+-]*' |
      awk '{ if ($4 + 0 > max) max = $4 + 0 } END { printf "%.3g", max }')
    summary="$(echo "$weights" | tail -1) (worst ${worst}); $losses; $peak"
    if [ $status = 0 ]; then row "$model 10 steps $schedule" "ok" "$summary"
    else row "$model 10 steps $schedule" "FAIL" "$summary"; fi
  done
  python3 - "$out/$model.gpipe.safetensors" "$out/$model.1f1b.safetensors" >> "$log" 2>&1 <<'PY'
import os, sys
if all(os.path.exists(p) for p in sys.argv[1:]):
    from safetensors.numpy import load_file
    a, b = (load_file(p) for p in sys.argv[1:])
    same = sum(a[k].tobytes() == b[k].tobytes() for k in a)
    print("gpu-check: GPipe and 1F1B weights bit-identical in %d of %d "
          "tensors" % (same, len(a)))
PY
done
[ $trained = 1 ] || row "10 steps GPipe / 1F1B vs CPU" "not run" "no model of the bundle has train/ (built without the reference)"

if [[ " $models " == *" bert-large-layer "* ]]; then
  say "gpu-check: bert-large-layer"
  t=$(limit 180)
  if [ "$t" = 0 ]; then
    row "BERT-large layer fwd+bwd" "not run" "$spent"
  else
    timeout "$t" python3 "$bundle/bert_large_layer.py" "$bundle" --profile 15 \
      --json "$out/bert-large-layer.json" >> "$log" 2>&1
    status=$?
    if [ $status = 0 ]; then
      row "BERT-large layer fwd+bwd" "ran" "$(tail -1 "$log")"
    else
      row "BERT-large layer fwd+bwd" "FAIL" "exit $status, see log"
    fi
  fi
fi

# The tiny BERT again under compute-sanitizer's memcheck (out-of-bounds and
# misaligned device accesses, leaks of the pool, API errors), where the tool is
# there; results are not compared again.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
if [[ " $models " == *" bert-tiny "* ]] && [ -n "$sanitizer" ] &&
    [ "$(limit 120)" = 0 ]; then
  row "bert-tiny memcheck" "not run" "$spent"
elif [[ " $models " == *" bert-tiny "* ]] && [ -n "$sanitizer" ]; then
  say "gpu-check: bert-tiny under compute-sanitizer memcheck"
  dir=$bundle/models/bert-tiny
  timeout "$(limit 120)" "$sanitizer" --tool memcheck --error-exitcode 3 \
    python3 "$bundle/run_cuda_artifacts.py" "$dir" \
    --weights "$dir/weights.safetensors" --inputs "$dir/inputs.safetensors" \
    > "$out/sanitizer.log" 2>&1
  status=$?
  tail -5 "$out/sanitizer.log" | tee -a "$log"
  case $status in
    0) row "bert-tiny memcheck" "ok" "$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$out/sanitizer.log" | tail -1)" ;;
    3) row "bert-tiny memcheck" "FAIL" "$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$out/sanitizer.log" | tail -1); see sanitizer.log" ;;
    *) row "bert-tiny memcheck" "FAIL" "exit $status, see sanitizer.log" ;;
  esac
else
  row "bert-tiny memcheck" "not run" "no compute-sanitizer on this machine"
fi

say "gpu-check: $(( $(date +%s) - start )) s on the GPU"
say ""
printf '%-34s %-8s %s\n' "check" "result" "details" | tee -a "$log"
for r in "${rows[@]}"; do echo "$r" | tee -a "$log"; done
