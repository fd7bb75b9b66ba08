// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-seq-pipe="method=greedy replicas=auto verbose=true schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=VERBOSE < %t.err
// RUN: ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-seq-pipe="method=dp replicas=auto schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>&1 | FileCheck %s --check-prefix=DP
// RUN: not ftpipe-opt %S/ftpipe-mixed-pipe-replicas.mlir -split-input-file --ftpipe-seq-pipe="replicas=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Tests `ftpipe-seq-pipe replicas=auto`: the depth x replicas search with
// Seq-Pipe's plans alone, on the chains of ftpipe-mixed-pipe-replicas.mlir
// (four ops of F = 1 ms and B = 2 ms, four alike devices, free links, 1F1B,
// M = 4): the four replicas of the whole chain (12 ms a mini-batch) beat
// the pipeline of depth 4 (21 ms), and the module keeps one device with
// replicas = [4] and the method's name; with weights that fill the devices
// only the pure pipeline fits; on 2 shared cores the replicas gain nothing
// and the pure pipeline stays. Without `verbose` nothing is printed.

// VERBOSE: ftpipe-seq-pipe: 4 ops on 4 devices of 'quad', replicas=auto
// VERBOSE-NEXT: seq-greedy pure 21.000 ms (depth 4, replicas 1) replicated 12.000 ms (depth 1, replicas 4) <- chosen
// VERBOSE-NEXT: chosen: seq-greedy 12.000 ms (depth 1, replicas 4)
// VERBOSE-NEXT: ftpipe-seq-pipe: 4 ops on 4 devices of 'quad', replicas=auto
// VERBOSE-NEXT: seq-greedy pure 21.000 ms (depth 4, replicas 1) replicated - <- chosen
// VERBOSE-NEXT: chosen: seq-greedy 21.000 ms (depth 4, replicas 1)
// VERBOSE-NEXT: ftpipe-seq-pipe: 4 ops on 4 devices of 'shared', replicas=auto
// VERBOSE-NEXT: seq-greedy pure 24.000 ms (depth 4, replicas 1) replicated 24.000 ms
// VERBOSE-NEXT: chosen: seq-greedy 24.000 ms (depth 4, replicas 1)

// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [<name = "g0"
// CHECK-NOT: name = "g1"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [0], recompute = [false], replicas = [4],
// CHECK: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [0, 1, 2, 3],
// CHECK-NOT: replicas =
// CHECK-SAME: >
// CHECK: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [0, 1, 2, 3],
// CHECK-NOT: replicas =
// CHECK-SAME: >

// DP-NOT: ftpipe-seq-pipe:
// DP: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], recompute = [false], replicas = [4],

// BAD: for the --replicas option: replicas: '0' is not a replication factor (1 to 65536); the passes take none, auto, a number of identical pipelines W or a factor per plan device r0,r1,...
