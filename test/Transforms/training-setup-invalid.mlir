// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-report="schedule=async microbatches=2" -o /dev/null

// Tests that an option of a pass that plans or reports which contradicts the
// module's #ftpipe.training is an error naming both values.
// expected-error @+1 {{ftpipe-report: option schedule=async contradicts the module's training setup (ftpipe.training has schedule = gpipe)}}
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

// Tests that the check covers every option: here the micro-batches.
// expected-error @+1 {{ftpipe-report: option microbatches=2 contradicts the module's training setup (ftpipe.training has microbatches = 4)}}
module attributes {
  ftpipe.training = #ftpipe.training<schedule = "async", microbatches = 4, optimizer = "sgd", weight_versions = "none", recompute = "false">,
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
