// RUN: ftpipe-opt %s --ftpipe-mixed-pipe="replicas=auto verbose=true schedule=gpipe microbatches=6 optimizer=sgd recompute=false" 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=VERBOSE < %t.err

// Tests PipeDream's per-device replicas in replicas=auto
// (lib/Partition/ReplicaSearch.h, spreadByLoad): three ops, the last one
// four times the others' work (4 + 8 ms against 1 + 2), each with 1000 bytes
// of weights on five devices of 3500 bytes (SGD: one op per device, with a
// replica's all-reduce buffer of its 1000 bytes of gradients), GPipe
// with M = 6. Only depth 3 fits. Mixed-Pipe puts the heavy op on device 0;
// the even layout of 5 processes over 3 devices (2,2,1) runs it on two, 3
// micro-batches of 12 ms each, while the per-device rule gives both spare
// processes to it (3,1,1: 2 micro-batches each) and is chosen; the plan
// records each device's replicas. Each layout is planned again uneven, at
// the square, fourth and eighth root (one op a device either way: the same
// times, not chosen). The step bound of any plan: the weights' state
// needs 2 devices, and 3,2 leaves a replica 2 micro-batches, so one
// micro-batch's path (18 ms) and one more of the heavy op's backward (8
// ms), as 3,1,1 would; of the layouts tried, 5 (one device) has the
// highest: a replica with 2 micro-batches of the whole 18 ms.
// VERBOSE: depth  5, replicas 1: infeasible
// VERBOSE: depth  3, replicas 2,2,1: simulated 44.000 ms per mini-batch
// VERBOSE-NEXT: depth  3, replicas 2,2,1 uneven: simulated 44.000 ms per mini-batch
// VERBOSE-NEXT: depth  3, replicas 2,2,1 uneven 1/4: simulated 44.000 ms per mini-batch
// VERBOSE-NEXT: depth  3, replicas 2,2,1 uneven 1/8: simulated 44.000 ms per mini-batch
// VERBOSE-NEXT: depth  3, replicas 3,1,1: simulated 34.000 ms per mini-batch{{.*}}<- chosen
// VERBOSE-NEXT: depth  3, replicas 3,1,1 uneven: simulated 34.000 ms per mini-batch
// VERBOSE-NEXT: depth  3, replicas 3,1,1 uneven 1/4: simulated 34.000 ms per mini-batch
// VERBOSE-NEXT: depth  3, replicas 3,1,1 uneven 1/8: simulated 34.000 ms per mini-batch
// VERBOSE-NEXT: depth  2, replicas 3,2: infeasible
// VERBOSE: bound (any plan): replicated 26.000 ms (depth 2, replicas 3,2); one micro-batch's path 18.000 ms; at most 36.000 ms for a layout tried
// CHECK: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [1, 2, 0], recompute = [false, false, false], replicas = [3, 1, 1],
// CHECK: tosa.add {{.*}}ftpipe.stage = 0
// CHECK-NEXT: tosa.add {{.*}}ftpipe.stage = 1
// CHECK-NEXT: tosa.add {{.*}}fwd_ms = 4.0{{.*}}ftpipe.stage = 2

module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "five", devices = [
    <name = "g0", memory_bytes = 3500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 3500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g2", memory_bytes = 3500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g3", memory_bytes = 3500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g4", memory_bytes = 3500, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 2, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 2, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 3, gbps = 1000000.0, latency_us = 0.0>,
             <src = 0, dst = 4, gbps = 1000000.0, latency_us = 0.0>,
             <src = 1, dst = 4, gbps = 1000000.0, latency_us = 0.0>,
             <src = 2, dst = 4, gbps = 1000000.0, latency_us = 0.0>,
             <src = 3, dst = 4, gbps = 1000000.0, latency_us = 0.0>]>
} {
  func.func @bottleneck(%w0: tensor<250xf32> {ftpipe.param}, %w1: tensor<250xf32> {ftpipe.param}, %w2: tensor<250xf32> {ftpipe.param}, %x: tensor<250xf32>) -> tensor<250xf32> {
    %a = tosa.add %x, %w0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 1000, act_bytes = 0, out_bytes = 0>} : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
    %b = tosa.add %a, %w1 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 1000, act_bytes = 0, out_bytes = 0>} : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
    %c = tosa.add %b, %w2 {ftpipe.cost = #ftpipe.cost<fwd_ms = 4.0, bwd_ms = 8.0, param_bytes = 1000, act_bytes = 0, out_bytes = 0>} : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
    return %c : tensor<250xf32>
  }
}
