// RUN: ftpipe-opt %s -split-input-file --ftpipe-mixed-pipe="replicas=auto verbose=true schedule=1f1b microbatches=4 optimizer=sgd recompute=false" 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=VERBOSE < %t.err
// RUN: not ftpipe-opt %s -split-input-file --ftpipe-mixed-pipe="replicas=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Tests replicas=auto (lib/Partition/ReplicaSearch.h) on a chain of four ops
// of F = 1 ms and B = 2 ms on four alike devices with free links, 1F1B, M = 4:
//  - as one pipeline of depth 4 a mini-batch takes (M + p - 1)(F + B) =
//    7 x 3 = 21 ms; four replicas of the whole chain, one micro-batch each,
//    take F + B = 4 x 3 = 12 ms, and the all-reduce of 16 bytes costs
//    nothing (depth 3, its device with two ops alone replicated, and two
//    pipelines of depth 2 lie between, by plans of Mixed-Pipe's choosing):
//    the four replicas win, and the module keeps one pipeline (one device,
//    the hardware of replica 0) with replicas = [4]; the replicated
//    pipelines of 2 or more devices are planned again "uneven", to the
//    chain bound's shares;
//  - the same chain with 1000 bytes of weights per op on devices of 2500
//    bytes (SGD: weights and gradients, 2000 bytes an op) fits only one op
//    per device: the pure pipeline of depth 4 stays, without `replicas`.
// The bound line (ReplicaBound.h): compute C = 4 x 3 = 12 ms per
// micro-batch; the pure pipeline's C / (1 - (3/4)^4) = 17.554 ms, the
// replicated one's C (one micro-batch per replica); with 4000 bytes of
// weights and gradients on 2500-byte devices, at least 4 devices: no
// replicated layout, and a device holds at most 1.25 ops' weights and
// gradients, 3.75 ms of compute: under that cap the pure pipeline's shares
// (T / 4, ...) no longer fit the first device, and its bound rises to
// 18.020 ms (the least T at which c_k = min(3.75, (T - c_0 - ... -
// c_{k-1}) / 4) add up to 12). The bound of any plan (the step bound:
// one micro-batch's path, 12 ms on the chain, and each replica's share of
// the work) is the replicated one's 12 ms; of the layouts tried, 2,1,1 and
// 2 have the highest, 14 ms (a replica with 2 micro-batches: the path and
// one more backward of 2 ms).

// VERBOSE: depth  4, replicas 1: simulated 21.000 ms per mini-batch
// VERBOSE: depth  3, replicas 2,1,1: simulated {{[0-9.]+}} ms per mini-batch
// VERBOSE: depth  2, replicas 2: simulated {{[0-9.]+}} ms per mini-batch
// VERBOSE: depth  2, replicas 2 uneven: simulated {{[0-9.]+}} ms per mini-batch
// VERBOSE: depth  1, replicas 4: simulated 12.000 ms per mini-batch{{.*}}<- chosen
// VERBOSE: bound (chain, compute only): pure pipeline 17.554 ms per mini-batch, replicated 12.000 ms (depth 1, replicas 4); compute 12.000 ms per micro-batch, at least 1 devices
// VERBOSE-NEXT: bound (any plan): replicated 12.000 ms (depth 1, replicas 4); one micro-batch's path 12.000 ms; at most 14.000 ms for a layout tried

// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [<name = "g0"
// CHECK-NOT: name = "g1"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [0], recompute = [false], replicas = [4],
// CHECK-LABEL: func.func @chain

// VERBOSE: depth  4, replicas 1: simulated 21.000 ms per mini-batch{{.*}}<- chosen
// VERBOSE: depth  3, replicas 2,1,1: infeasible: mixed-pipe found no plan that fits in memory
// VERBOSE: depth  2, replicas 2: infeasible: mixed-pipe found no plan that fits in memory
// VERBOSE: depth  1, replicas 4: infeasible: mixed-pipe found no plan that fits in memory
// VERBOSE: bound (chain, compute only): pure pipeline 18.020 ms per mini-batch, replicated - (none fits); compute 12.000 ms per micro-batch, at least 4 devices, gradients 0.000 GiB, all-reduce over 2 0.000 ms, at most 3.750 ms per micro-batch a device (its weights' state)
// VERBOSE-NEXT: bound (any plan): replicated - (none fits); one micro-batch's path 0.000 ms

// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [<name = "g0"
// CHECK-SAME: name = "g3"
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-3], [0-3], [0-3], [0-3]}}]
// CHECK-NOT: replicas
// CHECK-LABEL: func.func @chain

// BAD: for the --replicas option: replicas: '0' is not a replication factor (1 to 65536); the passes take none, auto, a number of identical pipelines W or a factor per plan device r0,r1,...

module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g2", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g3", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 2, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 3, gbps = 1000000.0, latency_us = 0.0>]>
} {
  func.func @chain(%w0: tensor<1xf32> {ftpipe.param}, %w1: tensor<1xf32> {ftpipe.param}, %w2: tensor<1xf32> {ftpipe.param}, %w3: tensor<1xf32> {ftpipe.param}, %x: tensor<250xf32>) -> tensor<250xf32> {
    %a = tosa.add %x, %w0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %b = tosa.add %a, %w1 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %c = tosa.add %b, %w2 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %d = tosa.add %c, %w3 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    return %d : tensor<250xf32>
  }
}

// -----

module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "quad", devices = [
    <name = "g0", memory_bytes = 2500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 2500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g2", memory_bytes = 2500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g3", memory_bytes = 2500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 2, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 3, gbps = 1000000.0, latency_us = 0.0>]>
} {
  func.func @chain(%w0: tensor<250xf32> {ftpipe.param}, %w1: tensor<250xf32> {ftpipe.param}, %w2: tensor<250xf32> {ftpipe.param}, %w3: tensor<250xf32> {ftpipe.param}, %x: tensor<250xf32>) -> tensor<250xf32> {
    %a = tosa.add %x, %w0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 1000, act_bytes = 0, out_bytes = 0>} : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
    %b = tosa.add %a, %w1 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 1000, act_bytes = 0, out_bytes = 0>} : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
    %c = tosa.add %b, %w2 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 1000, act_bytes = 0, out_bytes = 0>} : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
    %d = tosa.add %c, %w3 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 1000, act_bytes = 0, out_bytes = 0>} : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
    return %d : tensor<250xf32>
  }
}


// -----

// The first chain on four processes that share 2 cores (node_cores = [2]):
// whatever the layout, the 4 micro-batches' 48 ms of compute take 24 ms on
// 2 cores, so the four replicas (12 ms simulated at full speed each) gain
// nothing over the pipeline (21 ms simulated, its bubbles the other
// processes' turn), and the deeper option, tried first, stays.

// VERBOSE: depth  4, replicas 1: simulated 24.000 ms per mini-batch{{.*}}, shared cores 24.000 ms  <- chosen
// VERBOSE: depth  1, replicas 4: simulated 24.000 ms per mini-batch{{.*}}, shared cores 24.000 ms
// VERBOSE-NOT: <- chosen
// VERBOSE: bound (chain

// CHECK: ftpipe.hardware = #ftpipe.hardware<name = "shared", devices = [<name = "c0"
// CHECK-SAME: node_cores = [2]
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [{{[0-3], [0-3], [0-3], [0-3]}}]
// CHECK-NOT: replicas
// CHECK-LABEL: func.func @chain

module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "shared", devices = [
    <name = "c0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "c1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "c2", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "c3", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 2, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 3, gbps = 1000000.0, latency_us = 0.0>],
    node_cores = [2]>
} {
  func.func @chain(%w0: tensor<1xf32> {ftpipe.param}, %w1: tensor<1xf32> {ftpipe.param}, %w2: tensor<1xf32> {ftpipe.param}, %w3: tensor<1xf32> {ftpipe.param}, %x: tensor<250xf32>) -> tensor<250xf32> {
    %a = tosa.add %x, %w0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %b = tosa.add %a, %w1 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %c = tosa.add %b, %w2 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %d = tosa.add %c, %w3 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    return %d : tensor<250xf32>
  }
}
