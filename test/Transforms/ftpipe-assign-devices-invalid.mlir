// RUN: not ftpipe-opt %s --ftpipe-assign-devices 2>&1 | FileCheck %s --check-prefix=NOBLOCKS

// Tests that ftpipe-assign-devices on ops without blocks says which pass to
// run first.

// NOBLOCKS: error: op has no 'ftpipe.block': run --ftpipe-coarsen first
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "tiny", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>]>
} {
  func.func @big(%w: tensor<1000000xf32> {ftpipe.param}) -> tensor<1000000xf32> {
    %0 = tosa.abs %w {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 4000000, act_bytes = 0, out_bytes = 4000000>} : (tensor<1000000xf32>) -> tensor<1000000xf32>
    %1 = tosa.abs %0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 4000000>} : (tensor<1000000xf32>) -> tensor<1000000xf32>
    return %1 : tensor<1000000xf32>
  }
}
