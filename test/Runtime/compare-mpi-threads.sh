#!/bin/sh
# compare-mpi-threads.sh DIR PLACEMENT PROCESSES SCHEDULE STASHING
# Trains the tiny MLP 10 steps with AdamW twice, devices as threads and as
# MPI processes, and fails unless the saved weights are byte-identical.
set -e
dir=$1 placement=$2 np=$3 schedule=$4 stashing=$5
name="$dir/$(echo "$placement-$schedule-$stashing" | tr ',' '_')"
common="--model tiny-mlp --placement $placement --schedule $schedule --stashing $stashing --optimizer adamw --lr 0.01 --warmup 2 --weight-decay 0.01 --steps 10 --micro-batches 4 --timeout 30"
ftpipe-run $common --save "$name-threads.safetensors" > "$name-threads.log"
ftpipe-run --np "$np" $common --save "$name-mpi.safetensors" > "$name-mpi.log"
cmp "$name-threads.safetensors" "$name-mpi.safetensors"
# Same losses, step by step.
diff "$name-threads.log" "$name-mpi.log" > /dev/null || {
  grep -o 'step [0-9]* loss [0-9.]*' "$name-threads.log" > "$name-threads.loss"
  grep -o 'step [0-9]* loss [0-9.]*' "$name-mpi.log" > "$name-mpi.loss"
  diff "$name-threads.loss" "$name-mpi.loss"
}
