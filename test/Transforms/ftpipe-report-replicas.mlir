// RUN: ftpipe-model-gen gpt2-tiny --loss --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-seq-pipe=devices=4 --ftpipe-report="replicas=auto json=%t.json" -o /dev/null | FileCheck %s
// RUN: %python %S/Inputs/check_replica_choice.py %t.json | FileCheck %s --check-prefix=CHOSEN

// Tests `ftpipe-report replicas=auto` over every partitioner (the search of
// ftpipe-auto-partition replicas=auto, lib/Partition/ReplicaChoice.h): the
// tiny GPT-2 on 4 devices of the default preset, 1F1B at M = 8. Seq-Pipe's
// rows come first (dp, then greedy), then Mixed-Pipe's; the chosen option
// is Seq-Pipe's 2 replicas of a 2-device pipeline, each device cut in 4
// (ftpipe-compile --replicas=auto makes it too:
// test/Runtime/compile-replicas-auto.test), faster than any of Mixed-Pipe's
// options, which a report of Mixed-Pipe's search alone would have chosen
// among. Inputs/check_replica_choice.py checks on the JSON that the chosen row is the fastest
// feasible option of every partitioner (here a replicated one, more than 5 %
// under the fastest pure pipeline), and that it is the only one chosen.

// CHECK: replicas (each partitioner's plan on depth devices
// CHECK-NEXT: method depth replicas
// CHECK-NEXT: seq-dp 4 1 {{[0-9. ]+$}}
// CHECK: seq-dp 2 2 (cut in 4) {{[0-9. ]+}} chosen
// CHECK: seq-greedy 4 1 {{[0-9. ]+$}}
// CHECK-NOT: chosen
// CHECK: mixed-pipe 4 1 {{[0-9. ]+$}}
// CHECK-NOT: chosen

// CHOSEN: methods seq-dp seq-greedy mixed-pipe
// CHOSEN-NEXT: chosen seq-dp depth 2 replicas [2, 2], 1 chosen, fastest True, beats the fastest pure by 5 %: True
