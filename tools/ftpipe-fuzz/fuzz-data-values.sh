#!/usr/bin/env bash
# fuzz-data-values.sh BUILD_DIR SECONDS [SEED] - random data values through
# compiled artifacts (docs/Robustness.md). Compiles bert-tiny for 2 devices
# and test/Runtime's computed-index model (its gather reads the data's ids
# plus one), then until SECONDS have passed writes one data set for each,
# ids drawn from valid ids, boundary values (the table size, -1, -100,
# INT32_MIN/MAX) and random 32-bit integers, and runs ftpipe-run:
#  - bert-tiny twice: with the manifest as compiled (index_bound set), a set
#    with an id outside its table must be refused (exit 1, naming it), any
#    other must train; with index_bound removed from the manifest, every set
#    must train (the generated gathers clamp);
#  - the computed-index model once (its ids have no index_bound: they are
#    not a table's): it must stop at the trap (exit 70, naming the gather)
#    exactly when an id plus one (int32 arithmetic) is outside its 16 rows,
#    and train otherwise.
# bert-tiny's masks are all ones and answer positions inside the sequence
# (the values under test are the ids). Counts each outcome; a crash
# (signal), a hang (timeout) or any outcome other than the expected one is a
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
ftpipe-compile "$here/../../test/Runtime/Inputs/computed-index.mlir" \
  --devices=1 -O0 -o "$work/shifted" 2> /dev/null

declare -A count
# run_variant VARIANT EXPECTED DATA: one ftpipe-run of $work/VARIANT on DATA,
# its outcome counted, a finding kept.
run_variant() {
  local variant="$1" expected="$2" data="$3" status outcome
  timeout 120 ftpipe-run "$work/$variant" --data "$data" \
    --steps 1 --micro-batches 2 > "$work/out" 2> "$work/err"
  status=$?
  if ((status == 124)); then
    outcome=hang
  elif ((status > 128)); then
    outcome=crash
  elif ((status == 0)); then
    outcome=trained
  elif ((status == 1)) && grep -q "outside the" "$work/err"; then
    outcome=refused
  elif ((status == 70)) && grep -q "computed by the model is outside" "$work/err"; then
    outcome=trapped
  elif grep -q "the loss is" "$work/err"; then
    outcome=nonfinite-loss
  else
    outcome="other-exit-$status"
  fi
  local key="$variant:$outcome"
  [[ $outcome == "$expected" || $outcome == nonfinite-loss ]] ||
    key="$variant:FINDING-$outcome-expected-$expected"
  count[$key]=$((${count[$key]:-0} + 1))
  if [[ $key == *FINDING* ]]; then
    cp "$data" "$work/findings/$variant-$i.safetensors"
    cp "$work/err" "$work/findings/$variant-$i.err"
    echo "finding: $variant $outcome, expected $expected (data set $i, status $status)" >&2
  fi
}
end=$((SECONDS + seconds))
i=0
while ((SECONDS < end)); do
  i=$((i + 1))
  # bert-tiny's data set; prints the expected outcome of each variant.
  expected=$(python3 - "$work/zeros.safetensors" "$work/data.safetensors" \
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
outside = False
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
        outside |= not 0 <= v < bound
open(out, "wb").write(blob[:8 + n] + bytes(data))
print("refused" if outside else "trained", "trained")
PY
)
  run_variant bert "${expected% *}" "$work/data.safetensors"
  run_variant unchecked "${expected#* }" "$work/data.safetensors"

  # The computed-index model's data set: 4 samples of 4 ids (every one read
  # in the one step of 2 micro-batches).
  # Its ids are not a table's (the gather reads them plus one): the manifest
  # has no index_bound for them, and only the trap guards the table.
  expected=$(python3 - "$work/shifted.safetensors" "$seed" "$i" <<'PY'
import json, random, struct, sys
out, seed, i = sys.argv[1:4]
rng = random.Random(int(seed) * 1000003 + int(i) + 500009)
bound = 16  # the rows of the model's table
p = rng.choice([0.0, 0.0, 0.05, 0.2, 0.5])
ids = [rng.choice([bound - 1, bound, -1, -2, -100, -2**31, 2**31 - 1,
                   rng.randrange(-2**31, 2**31)])
       if rng.random() < p else rng.randrange(0, bound - 1) for _ in range(16)]
h = json.dumps({"input_ids": {"dtype": "I32", "shape": [4, 4],
                              "data_offsets": [0, 64]}}).encode()
h += b" " * (-len(h) % 8)
open(out, "wb").write(struct.pack("<Q", len(h)) + h + struct.pack("<16i", *ids))
# The model reads row id + 1 (int32 arithmetic: 2^31 - 1 wraps).
shifted = [((v + 1 + 2**31) % 2**32) - 2**31 for v in ids]
print("trapped" if any(not 0 <= s < bound for s in shifted) else "trained")
PY
)
  run_variant shifted "$expected" "$work/shifted.safetensors"
done
echo "fuzz-data-values: $i data sets in $seconds s (seed $seed)"
for key in $(printf '%s\n' "${!count[@]}" | sort); do
  echo "  $key ${count[$key]}"
done
ls "$work/findings" | sed 's/^/  kept: /'
