// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=auto schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=SEARCHES < %t.err
// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=none schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=auto schedule=async microbatches=4 optimizer=sgd recompute=false" 2>/dev/null | FileCheck %s --check-prefix=ASYNC
// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=auto schedule=async sync-schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>%t.sync.err | FileCheck %s --check-prefix=SYNC
// RUN: FileCheck %s --check-prefix=SYNC-SEARCHES < %t.sync.err
// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-mixed-pipe="replicas=auto schedule=async sync-schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>/dev/null | FileCheck %s --check-prefix=SYNC-MIXED
// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=auto verbose=true schedule=1f1b microbatches=4 optimizer=sgd recompute=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERBOSE
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Tests replicas=auto over every partitioner (lib/Partition/ReplicaChoice.h)
// on the chains of ftpipe-mixed-pipe-replicas.mlir (four ops of F = 1 ms
// and B = 2 ms, four alike devices, free links, 1F1B, M = 4): each of
// Seq-Pipe dp, Seq-Pipe greedy and Mixed-Pipe has its pure pipeline of
// depth 4 (7 x 3 = 21 ms a mini-batch) and its four replicas of the whole
// chain (12 ms); the replicas beat every pure pipeline by more than 5 %, the
// first partitioner's option of the fastest is kept, and the module keeps
// one pipeline with replicas = [4]. With weights that fill the devices only
// the pure pipelines fit, and the first one stays.

// SEARCHES: ftpipe-auto-partition: 4 ops on 4 devices of 'quad', replicas=auto
// SEARCHES-NEXT: seq-dp pure 21.000 ms (depth 4, replicas 1) replicated 12.000 ms (depth 1, replicas 4) <- chosen
// SEARCHES-NEXT: seq-greedy pure 21.000 ms (depth 4, replicas 1) replicated 12.000 ms (depth 1, replicas 4)
// SEARCHES-NEXT: mixed-pipe pure 21.000 ms (depth 4, replicas 1) replicated 12.000 ms (depth 1, replicas 4)
// SEARCHES-NEXT: chosen: seq-dp 12.000 ms (depth 1, replicas 4)

// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [<name = "g0"
// CHECK-NOT: name = "g1"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], recompute = [false], replicas = [4],
// CHECK-LABEL: func.func @chain

// SEARCHES: ftpipe-auto-partition: 4 ops on 4 devices of 'quad', replicas=auto
// SEARCHES-NEXT: seq-dp pure 21.000 ms (depth 4, replicas 1) replicated - <- chosen
// SEARCHES-NEXT: seq-greedy pure 21.000 ms (depth 4, replicas 1) replicated -
// SEARCHES-NEXT: mixed-pipe pure 21.000 ms (depth 4, replicas 1) replicated -
// SEARCHES-NEXT: chosen: seq-dp 21.000 ms (depth 4, replicas 1)

// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [<name = "g0"
// CHECK-SAME: name = "g3"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1, 2, 3]
// CHECK-NOT: replicas
// CHECK-LABEL: func.func @chain

// With `sync-schedule` the options compete by their step under it (the
// schedule the plan will run under), memory still planned under `schedule`:
// under FTPipe's async schedule the pure pipeline of the first chain and
// its replicas both take 12 ms a mini-batch (the pipeline's steady state is
// its busiest device's 3 ms a micro-batch), so the pure pipeline stays;
// trained with 1F1B the pipeline's step is 21 ms against the replicas' 12
// ms, and the replicas win, in ftpipe-auto-partition and ftpipe-mixed-pipe.
// ASYNC: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1, 2, 3], recompute = [false, false, false, false], objective_ms
// ASYNC-NOT: replicas =
// ASYNC-LABEL: func.func @chain
// SYNC: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], recompute = [false], replicas = [4],
// SYNC-LABEL: func.func @chain
// SYNC-SEARCHES: seq-dp pure 12.000 ms (depth 4, replicas 1) step 21.000 ms replicated 12.000 ms (depth 1, replicas 4) step 12.000 ms <- chosen
// SYNC-SEARCHES: chosen: seq-dp 12.000 ms (depth 1, replicas 4) step 12.000 ms
// SYNC-MIXED: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [0], recompute = [false], replicas = [4],
// SYNC-MIXED-LABEL: func.func @chain

// verbose=true also prints every option of each partitioner's search and
// its bounds (as ftpipe-mixed-pipe verbose does Mixed-Pipe's): the option
// chosen over all of them marked, each other search's own choice too.
// VERBOSE: ftpipe-auto-partition: 4 ops on 4 devices of 'quad', replicas=auto
// VERBOSE: chosen: seq-dp
// VERBOSE-NEXT: options of seq-dp:
// VERBOSE-NEXT: depth 4, replicas 1: simulated 21.000 ms per mini-batch
// VERBOSE: depth 1, replicas 4: simulated 12.000 ms per mini-batch{{.*}} <- chosen
// VERBOSE: bound (chain, compute only)
// VERBOSE-NEXT: bound (any plan)
// VERBOSE-NEXT: options of seq-greedy:
// VERBOSE: depth 1, replicas 4: simulated 12.000 ms per mini-batch{{.*}} <- its search's choice
// VERBOSE: options of mixed-pipe:
// VERBOSE: depth 1, replicas 4: simulated 12.000 ms per mini-batch{{.*}} <- its search's choice

// replicas=none (the default) keeps one pipeline over the four devices,
// which the replicas beat on the first chain; `replicas` takes none, auto
// or a number W (test/Transforms/ftpipe-replicas-width.mlir); its parser
// refuses the rest.
// NONE: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1, 2, 3], recompute = [false, false, false, false], objective_ms
// NONE-NOT: replicas =
// NONE-LABEL: func.func @chain

// BAD: for the --replicas option: replicas: '0' is not a replication factor (1 to 65536); the passes take none, auto, a number of identical pipelines W or a factor per plan device r0,r1,...
