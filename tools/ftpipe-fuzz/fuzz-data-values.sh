#!/usr/bin/env bash
# fuzz-data-values.sh BUILD_DIR SECONDS [SEED] - random data values through
# compiled artifacts (docs/Robustness.md). Compiles bert-tiny for 2 devices,
# then until SECONDS have passed: writes a data set whose ids are drawn from
# valid ids, boundary values (the table size, -1, -100, INT32_MIN/MAX) and
# random 32-bit integers, and runs ftpipe-run on it twice:
#  - with the manifest as compiled (index_bound set): a set with an id outside
#    its table must be refused (exit 1, naming it), any other must train;
#  - with index_bound removed from the manifest: every set must train (the
#    generated gathers clamp), never crash.
# Masks are all ones and answer positions inside the sequence (the values
# under test are the ids). Counts each outcome; a crash (signal), a hang
# (timeout), an out-of-range set accepted or a valid set refused is a
# finding, its data set kept; a run stopped by a non-finite loss is counted
# apart.
set -uo pipefail
build="$1"
seconds="$2"
seed="${3:-1}"
work="$(mktemp -d)"
export PATH="$build/bin:$PATH" OPENBLAS_NUM_THREADS=1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

ftpipe-model-gen bert-tiny --loss --quiet -o "$work/bert.mlir"
ftpipe-compile "$work/bert.mlir" --devices=2 -O0 -o "$work/bert" 2> /dev/null
mkdir -p "$work/unchecked" "$work/findings"
cp "$work/bert/"*.so "$work/unchecked"
python3 - "$work/bert/manifest.json" "$work/unchecked/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for v in m["inputs"].values():
    v.pop("index_bound", None)
json.dump(m, open(sys.argv[2], "w"))
PY
python3 "$here/../../test/Runtime/Inputs/make-dataset.py" "$work/bert" 4 \
  "$work/zeros.safetensors"

declare -A count
end=$((SECONDS + seconds))
i=0
while ((SECONDS < end)); do
  i=$((i + 1))
  # The data set, and whether it holds an id outside its table.
  outside=$(python3 - "$work/zeros.safetensors" "$work/data.safetensors" \
                    "$work/bert/manifest.json" "$seed" "$i" <<'PY'
import json, random, struct, sys
src, out, manifest, seed, i = sys.argv[1:6]
rng = random.Random(int(seed) * 1000003 + int(i))
bounds = {k: v.get("index_bound") for k, v in
          json.load(open(manifest))["inputs"].items()}
blob = open(src, "rb").read()
n = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + n])
data = bytearray(blob[8 + n:])
outside = 0
for name, info in header.items():
    if name == "__metadata__" or info["dtype"] != "I32":
        continue
    begin, end = info["data_offsets"]
    if not bounds.get(name):
        # Masks all ones, answer positions inside the sequence: the values
        # under test are the ids.
        one = name == "attention_mask"
        for at in range(begin, end, 4):
            struct.pack_into("<i", data, at, 1 if one else rng.randrange(16))
        continue
    bound = bounds[name]
    p = rng.choice([0.0, 0.0, 0.01, 0.1, 0.5])
    for at in range(begin, end, 4):
        if rng.random() < p:
            v = rng.choice([bound, bound + 1, -1, -100, -2**31, 2**31 - 1,
                            rng.randrange(-2**31, 2**31)])
        else:
            v = rng.randrange(0, bound)
        struct.pack_into("<i", data, at, v)
        if not 0 <= v < bound:
            outside = 1
open(out, "wb").write(blob[:8 + n] + bytes(data))
print(outside)
PY
)
  for variant in bert unchecked; do
    timeout 120 ftpipe-run "$work/$variant" --data "$work/data.safetensors" \
      --steps 1 --micro-batches 2 > "$work/out" 2> "$work/err"
    status=$?
    if ((status == 124)); then
      outcome=hang
    elif ((status > 128)); then
      outcome=crash
    elif [[ $variant == bert && $outside == 1 ]]; then
      if ((status == 1)) && grep -q "outside the" "$work/err"; then
        outcome=refused-outside
      else
        outcome=accepted-outside
      fi
    elif ((status == 0)); then
      outcome=trained
    elif grep -q "the loss is" "$work/err"; then
      outcome=nonfinite-loss
    else
      outcome=refused-valid
    fi
    key="$variant:$outcome"
    count[$key]=$((${count[$key]:-0} + 1))
    case $outcome in
    hang | crash | accepted-outside | refused-valid)
      cp "$work/data.safetensors" "$work/findings/$variant-$i.safetensors"
      echo "finding: $variant $outcome (data set $i, status $status)" >&2 ;;
    esac
  done
done
echo "fuzz-data-values: $i data sets in $seconds s (seed $seed)"
for key in $(printf '%s\n' "${!count[@]}" | sort); do
  echo "  $key ${count[$key]}"
done
ls "$work/findings" | sed 's/^/  kept: /'
