// RUN: ftpipe-opt %s --ftpipe-refine="optimizer=sgd recompute=false" | FileCheck %s
// RUN: ftpipe-model-gen t5-tiny --loss --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-mixed-pipe=devices=4 --ftpipe-refine | FileCheck %s --check-prefix=FORWARD

// Tests that a plan that forwards a value (t5-tiny's encoder position bias on
// Mixed-Pipe's plan for 4 devices) refines, with forwarding decided again.
// FORWARD: method = "mixed-pipe+refine"
// FORWARD: ftpipe.forward

// Tests that refinement moves boundary ops from the busy stage to the idle
// one: six 1 ms ops start as 5 + 1 and end as 3 + 3.

// CHECK: ftpipe.plan = #ftpipe.plan<method = "hand+refine", stage_device = [0, 1], recompute = [false, false], objective_ms = 3.0,
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-3: ftpipe.stage = 0 : i64
// CHECK-COUNT-3: ftpipe.stage = 1 : i64
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], objective_ms = 5.0, memory_bytes = [0, 0]>
} {
  func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
    %0 = tosa.abs %x {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %1 = tosa.abs %0 {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %2 = tosa.abs %1 {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %3 = tosa.abs %2 {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %4 = tosa.abs %3 {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %5 = tosa.abs %4 {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    return %5 : tensor<16xf32>
  }
}
