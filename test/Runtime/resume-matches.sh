#!/bin/sh
# resume-matches.sh DIR NAME OPTIONS...
# Trains the tiny MLP on 4 MPI processes for 10 steps with a checkpoint
# every 5, resumes from the checkpoint directory to step 20, trains 20 steps
# without interruption, and fails unless the two final weights files are
# byte-identical and the resumed run printed the uninterrupted run's losses
# of steps 10 to 19.
set -e
dir=$1 name=$2
shift 2
base="$dir/$name"
ftpipe-run --np 4 --model tiny-mlp "$@" --steps 10 --checkpoint-dir "$base.ckpt" --checkpoint-every 5 > "$base.first.log"
ftpipe-run --np 4 --model tiny-mlp "$@" --steps 20 --resume "$base.ckpt" --save "$base.resumed.safetensors" > "$base.resumed.log"
ftpipe-run --np 4 --model tiny-mlp "$@" --steps 20 --save "$base.straight.safetensors" > "$base.straight.log"
cmp "$base.resumed.safetensors" "$base.straight.safetensors"
grep -o 'step [0-9]* loss [0-9.]*' "$base.resumed.log" > "$base.resumed.loss"
grep -o 'step [0-9]* loss [0-9.]*' "$base.straight.log" | sed -n '11,20p' > "$base.straight.loss"
diff "$base.resumed.loss" "$base.straight.loss"
