// RUN: not ftpipe-opt %s --ftpipe-seq-pipe=devices=3 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not ftpipe-opt %s --ftpipe-seq-pipe=function=missing 2>&1 | FileCheck %s --check-prefix=NOFUNC

// Tests that ftpipe-seq-pipe refuses more devices than the hardware has and
// a function that the module does not hold, naming both.

// DEVICES: error: devices=3 but hardware 'tiny' has 2 devices
// NOFUNC: error: no function '@missing' with a body
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
