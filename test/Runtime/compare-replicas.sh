#!/bin/sh
# compare-replicas.sh DIR PLACEMENT REPLICAS SCHEDULE STASHING
# Trains the tiny MLP 8 steps of 6 micro-batches with AdamW on the plan's
# devices (one MPI process each) and replicated (--replicas REPLICAS, one
# process per replica), and fails unless the saved weights agree within
# 1e-5: a replicated run trains as the plan does with the same global batch
# (only the order of the gradient additions differs).
set -e
dir=$1 placement=$2 replicas=$3 schedule=$4 stashing=$5
name="$dir/$(echo "$placement-$replicas-$schedule-$stashing" | tr ',' '_')"
devices=$(echo "$placement" | tr ',' '\n' | sort -u | wc -l)
# One factor per device, or one for every device.
case "$replicas" in
*,*) processes=0
     for r in $(echo "$replicas" | tr ',' ' '); do processes=$((processes + r)); done ;;
*) processes=$((replicas * devices)) ;;
esac
common="--model tiny-mlp --placement $placement --schedule $schedule --stashing $stashing --optimizer adamw --lr 0.01 --warmup 2 --weight-decay 0.01 --steps 8 --micro-batches 6 --timeout 30"
ftpipe-run --np "$devices" $common --save "$name-plan.safetensors" > "$name-plan.log"
ftpipe-run --np "$processes" --replicas "$replicas" $common --save "$name-replicas.safetensors" > "$name-replicas.log"
python3 "$(dirname "$0")/Inputs/close-weights.py" "$name-replicas.safetensors" "$name-plan.safetensors" 1e-5
