// RUN: ftpipe-opt %s --split-input-file --ftpipe-report -o - | FileCheck %s
// RUN: ftpipe-opt %s --split-input-file --ftpipe-report="schedule=gpipe microbatches=4" -o /dev/null | FileCheck %s --check-prefix=AGREE

// The training setup (#ftpipe.training) is recorded once on the module and
// read by every pass that plans or reports.

// Tests that a pass with no setup options reports for the recorded setup,
// and that an option agreeing with it is accepted.
// CHECK: setup: GPipe schedule, sgd, one weight version, no recomputation, M = 4
// CHECK: module attributes {ftpipe.hardware
// CHECK-SAME: ftpipe.training = #ftpipe.training<schedule = "gpipe", microbatches = 4, optimizer = "sgd", weight_versions = "none", recompute = "false">
// AGREE: setup: GPipe schedule, sgd, one weight version, no recomputation, M = 4
module attributes {
  ftpipe.training = #ftpipe.training<schedule = "gpipe", microbatches = 4, optimizer = "sgd", weight_versions = "none", recompute = "false">,
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], objective_ms = 3.0, memory_bytes = [0, 0]>
} {
  func.func @chain(%x: tensor<1024xf32> {ftpipe.param}) -> tensor<1024xf32> {
    %a = tosa.abs %x {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 0, out_bytes = 4096>} : (tensor<1024xf32>) -> tensor<1024xf32>
    %b = tosa.tanh %a {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 0, out_bytes = 4096>} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %b : tensor<1024xf32>
  }
}

// -----

// Tests that the first pass that plans or reports records the setup it ran
// with: the options given, the defaults for the others.
// CHECK: setup: async (PipeDream 1F1B) schedule, adam, one weight version, recomputation, M = 8
// CHECK: ftpipe.training = #ftpipe.training<schedule = "async", microbatches = 8, optimizer = "adam", weight_versions = "none", recompute = "true">
// AGREE: setup: GPipe schedule, adam, one weight version, recomputation, M = 4
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], objective_ms = 3.0, memory_bytes = [0, 0]>
} {
  func.func @chain(%x: tensor<1024xf32> {ftpipe.param}) -> tensor<1024xf32> {
    %a = tosa.abs %x {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 0, out_bytes = 4096>} : (tensor<1024xf32>) -> tensor<1024xf32>
    %b = tosa.tanh %a {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 0, out_bytes = 4096>} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %b : tensor<1024xf32>
  }
}
