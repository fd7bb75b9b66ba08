// RUN: not ftpipe-opt %s --ftpipe-report 2>&1 | FileCheck %s

// A hardware description written in the IR is checked like a cluster file:
// a device with next to no speed is refused for its speed (it used to run
// for minutes, or to be reported as a memory problem), before any op is
// blamed for a time that is not finite.

// CHECK: error: invalid hardware: device 1 ('g1'): tflops must be in [0.001, 1e+15], got 1e-300
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "tiny", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0e-300, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>]>
} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = tosa.abs %x {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 16>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
