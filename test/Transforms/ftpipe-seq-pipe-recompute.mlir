// RUN: ftpipe-opt %s --ftpipe-seq-pipe="method=dp optimizer=sgd recompute=true" | FileCheck %s --check-prefix=ALWAYS
// RUN: ftpipe-opt %s --ftpipe-seq-pipe="method=dp optimizer=sgd recompute=false" | FileCheck %s --check-prefix=NEVER
// RUN: ftpipe-opt %s --ftpipe-seq-pipe="method=dp optimizer=sgd recompute=auto" | FileCheck %s --check-prefix=AUTO
// RUN: ftpipe-opt %s --ftpipe-seq-pipe="method=dp optimizer=sgd recompute=auto" --ftpipe-report="optimizer=sgd" -o /dev/null | FileCheck %s --check-prefix=REPORT

// Tests the recompute option on a chain of four ops (forward 1 ms, backward
// 2 ms, 1000 bytes of activations each) on two devices of 3000 bytes.
// Recomputing everywhere, the best split is 2 | 2 (8 ms per device). Keeping
// everything, stage 0 would hold two micro-batches of 2000 bytes, so only
// 1 | 3 fits (9 ms). With auto, the 2 | 2 split recomputes on stage 0 (whose
// two micro-batches in flight do not fit) and keeps activations on stage 1:
// 8 ms on device 0, 6 ms on device 1.

// ALWAYS: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = 8.0,
// NEVER: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], recompute = [false, false], objective_ms = 9.0,
// AUTO: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], recompute = [true, false], objective_ms = 8.0,

// REPORT: setup: {{.*}}, recomputation on 1 of 2 stages, M = 8
// REPORT: stage device {{.*}} recompute
// REPORT-NEXT: 0 0 {{.*}} yes
// REPORT-NEXT: 1 1 {{.*}} no
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 3000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 3000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000.0, latency_us = 0.0>]>
} {
  func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
    %0 = tosa.abs %x {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 1000, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %1 = tosa.abs %0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 1000, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %2 = tosa.abs %1 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 1000, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %3 = tosa.abs %2 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 1000, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    return %3 : tensor<16xf32>
  }
}
