// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-mixed-pipe="replicas=2 verbose=true schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=MIXED < %t.err
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-mixed-pipe="replicas=2 verbose=true schedule=async sync-schedule=zb-auto microbatches=4 optimizer=sgd recompute=false" 2>&1 >/dev/null | FileCheck %s --check-prefix=SYNC
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=2 schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>%t.auto.err | FileCheck %s --check-prefix=AUTO
// RUN: FileCheck %s --check-prefix=AUTO-SEARCHES < %t.auto.err
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-seq-pipe="replicas=4 method=greedy schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>/dev/null | FileCheck %s --check-prefix=SEQ
// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-seq-pipe="replicas=1 method=greedy schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-mixed-pipe="replicas=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-auto-partition="replicas=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIVIDE-AUTO
// RUN: echo "module {}" | not ftpipe-opt --pass-pipeline='builtin.module(ftpipe-mixed-pipe{replicas=2},ftpipe-seq-pipe{replicas=auto},ftpipe-auto-partition{replicas=1},ftpipe-seq-pipe{replicas=1,2,1})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir --ftpipe-mixed-pipe="replicas=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir --ftpipe-auto-partition="replicas=two" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-mixed-pipe="replicas=1,2,1 verbose=true schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>%t.list.err | FileCheck %s --check-prefix=LIST
// RUN: FileCheck %s --check-prefix=LIST-SEARCH < %t.list.err
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-seq-pipe="replicas=2,1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUM
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir --ftpipe-seq-pipe="replicas=65537" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LARGE

// Tests replicas=W (W identical pipelines of depth P / W, PipeDream-2BW's)
// on the chains of ftpipe-mixed-pipe-replicas.mlir: four ops of F = 1 ms and
// B = 2 ms on four alike devices with free links, 1F1B, M = 4.
//  - The first chain: replicas=2 plans the pipeline on 2 devices (replica
//    0 of each: g0 and g2) and runs each twice, even though the four
//    replicas of replicas=auto (12 ms) are faster: only layouts of width 2
//    are tried (the even one, its cuts and its uneven plans; no per-device
//    layout, no other depth), and the fastest of them is kept (Mixed-Pipe's
//    plan cut in 2 stages a device, 16 ms; Seq-Pipe's 2 + 2 ops, 18 ms).
//  - The second chain's weights fill the devices: no pipeline of depth 2
//    fits, so replicas=2 is refused with the reason, not replaced by the
//    pure pipeline.
//  - The third chain's processes share 2 cores: the pure pipeline ties, but
//    replicas=2 is what was asked for.
// replicas=4 is one replica of the whole chain per device; replicas=1 is
// replicas=none. W must divide the devices; 0, words and numbers beyond
// ReplicaLayout::kMaxReplicas are refused by the option's parser, which
// spells none, W and factors per device as ftpipe-compile's and
// ftpipe-run's --replicas do.
// replicas=1,2,1 (a factor per plan device, PipeDream's per-stage
// replication) plans that layout alone the same way: the pipeline on the
// devices of each plan device's replica 0 (g0, g1 and g3), its uneven
// plans; the chain that fills the devices is refused, and factors that do
// not add up to the devices are refused by the pass.

// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [<name = "g0"
// CHECK-NOT: name = "g1"
// CHECK-SAME: name = "g2"
// CHECK-NOT: name = "g3"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-9, ]+}}], recompute = [{{[a-z, ]+}}], replicas = [2, 2],
// CHECK-LABEL: func.func @chain
// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "shared", devices = [<name = "c0"
// CHECK-NOT: name = "c1"
// CHECK-SAME: name = "c2"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-9, ]+}}], recompute = [{{[a-z, ]+}}], replicas = [2, 2],

// MIXED-NOT: depth {{[134]}},
// MIXED: depth  2, replicas 2: simulated 23.000 ms per mini-batch
// MIXED-NOT: depth {{[134]}},
// MIXED: depth  2, replicas 2 (cut in 2): simulated 16.000 ms per mini-batch{{.*}}<- chosen
// MIXED-NOT: depth {{[134]}},
// MIXED: bound (chain, compute only)
// MIXED: error: mixed-pipe replicas=2: 2 identical pipelines of depth 2 are not feasible:
// MIXED-NEXT: 2 x 2: mixed-pipe found no plan that fits in memory
// MIXED-NOT: depth {{[134]}},
// MIXED: depth  2, replicas 2: simulated 24.000 ms per mini-batch{{.*}}<- chosen

// With sync-schedule=zb-auto the options of width 2 compete by their step
// under zb-auto (its lists within each device's memory).
// SYNC-NOT: depth {{[134]}},
// SYNC: depth 2, replicas 2 uneven: simulated 15.000 ms per mini-batch{{.*}}, zb-auto step 15.000 ms <- chosen

// AUTO: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [0, 1, 0, 1], recompute = [false, false, false, false], replicas = [2, 2],
// AUTO: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], recompute = [false, false], replicas = [2, 2],
// AUTO-SEARCHES: ftpipe-auto-partition: 4 ops on 4 devices of 'quad', replicas=2
// AUTO-SEARCHES-NEXT: seq-dp pure - replicated 18.000 ms (depth 2, replicas 2){{$}}
// AUTO-SEARCHES-NEXT: seq-greedy pure - replicated 18.000 ms (depth 2, replicas 2){{$}}
// AUTO-SEARCHES-NEXT: mixed-pipe pure - replicated 16.000 ms (depth 2, replicas 2 (cut in 2)) <- chosen
// AUTO-SEARCHES-NEXT: chosen: mixed-pipe 16.000 ms (depth 2, replicas 2 (cut in 2))
// AUTO-SEARCHES: error: auto-partition replicas=2: no partitioner's depth x replicas option is feasible:
// AUTO-SEARCHES-NEXT: seq-dp: 2 identical pipelines of depth 2 are not feasible:
// AUTO-SEARCHES-NEXT: 2 x 2: no contiguous split of 4 nodes into at most 2 stages fits in memory
// AUTO-SEARCHES: ftpipe-auto-partition: 4 ops on 4 devices of 'shared', replicas=2
// AUTO-SEARCHES-NEXT: seq-dp pure - replicated 24.000 ms (depth 2, replicas 2) <- chosen

// SEQ: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [0], recompute = [false], replicas = [4],
// SEQ: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [0], recompute = [false], replicas = [4],

// ONE: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [0, 1, 2, 3],
// ONE-NOT: replicas =
// ONE-SAME: >


// LIST: ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [<name = "g0"
// LIST-SAME: name = "g1"
// LIST-NOT: name = "g2"
// LIST-SAME: name = "g3"
// LIST-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-9, ]+}}], recompute = [{{[a-z, ]+}}], replicas = [1, 2, 1],
// LIST-LABEL: func.func @chain
// LIST: ftpipe.hardware = #ftpipe.hardware<name = "shared", devices = [<name = "c0"
// LIST-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-9, ]+}}], recompute = [{{[a-z, ]+}}], replicas = [1, 2, 1],

// LIST-SEARCH-NOT: {{^ +}}depth {{[124]}},
// LIST-SEARCH: depth  3, replicas 1,2,1: simulated 23.000 ms per mini-batch{{.*}}<- chosen
// LIST-SEARCH-NOT: {{^ +}}depth {{[124]}},
// LIST-SEARCH: error: mixed-pipe replicas=1,2,1: the layout 1,2,1 is not feasible:
// LIST-SEARCH-NEXT: 3 x 1,2,1: mixed-pipe found no plan that fits in memory
// LIST-SEARCH-NOT: {{^ +}}depth {{[124]}},
// LIST-SEARCH: depth  3, replicas 1,2,1: simulated 24.000 ms per mini-batch{{.*}}<- chosen

// DIVIDE: error: mixed-pipe replicas=3: 3 identical pipelines do not divide the 4 devices: each needs 4 / 3 of them

// DIVIDE-AUTO: error: auto-partition replicas=8: 8 identical pipelines do not divide the 4 devices: each needs 4 / 8 of them
// DIVIDE-AUTO-NOT: seq-dp:

// The option prints as it is spelled (a pipeline printed and parsed back
// keeps it); replicas=1 is none.
// PRINT: ftpipe-mixed-pipe{{.*}} replicas=2 {{.*}}ftpipe-seq-pipe{{.*}} replicas=auto {{.*}}ftpipe-auto-partition{{.*}} replicas=none {{.*}}ftpipe-seq-pipe{{.*}} replicas=1,2,1 

// ZERO: for the --replicas option: replicas: '0' is not a replication factor (1 to 65536); the passes take none, auto, a number of identical pipelines W or a factor per plan device r0,r1,...
// WORD: for the --replicas option: replicas: 'two' is not a replication factor (1 to 65536); the passes take none, auto, a number of identical pipelines W or a factor per plan device r0,r1,...
// SUM: error: seq-dp replicas=2,1: the layout 2,1 runs 3 processes, not the 4 devices
// LARGE: for the --replicas option: replicas: '65537' is not a replication factor (1 to 65536); the passes take none, auto, a number of identical pipelines W or a factor per plan device r0,r1,...
