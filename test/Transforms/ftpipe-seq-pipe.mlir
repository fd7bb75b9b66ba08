// RUN: ftpipe-opt %s --ftpipe-seq-pipe="method=dp optimizer=sgd recompute=false" | FileCheck %s --check-prefixes=CHECK,DP
// RUN: ftpipe-opt %s --ftpipe-seq-pipe="method=greedy optimizer=sgd recompute=false" | FileCheck %s --check-prefixes=CHECK,GREEDY
// RUN: ftpipe-opt %s --ftpipe-seq-pipe="devices=1 optimizer=sgd recompute=false" | FileCheck %s --check-prefix=ONE

// Tests Seq-Pipe on a chain of six ops with forward times 1, 2, 3, 1, 2, 3 ms
// (no backward) on two devices joined by a fast link: the best contiguous
// split is after the third op, 6 ms on each device.

// DP: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], recompute = [false, false], objective_ms = 6.0,
// GREEDY: ftpipe.plan = #ftpipe.plan<method = "seq-greedy", stage_device = [0, 1], recompute = [false, false], objective_ms = 6.0,
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-3: ftpipe.stage = 0 : i64
// CHECK-COUNT-3: ftpipe.stage = 1 : i64

// With one device the hardware shrinks to it and everything is stage 0.
// ONE: ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [<name = "g0"
// ONE-NOT: name = "g1"
// ONE-SAME: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], recompute = [false], objective_ms = 12.0
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000.0, latency_us = 0.0>]>
} {
  func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
    %0 = tosa.abs %x {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %1 = tosa.abs %0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 2.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %2 = tosa.abs %1 {ftpipe.cost = #ftpipe.cost<fwd_ms = 3.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %3 = tosa.abs %2 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %4 = tosa.abs %3 {ftpipe.cost = #ftpipe.cost<fwd_ms = 2.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %5 = tosa.abs %4 {ftpipe.cost = #ftpipe.cost<fwd_ms = 3.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    return %5 : tensor<16xf32>
  }
}
