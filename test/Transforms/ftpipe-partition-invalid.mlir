// RUN: not ftpipe-opt %s --ftpipe-seq-pipe=devices=3 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not ftpipe-opt %s --ftpipe-auto-partition 2>&1 | FileCheck %s --check-prefix=NOFIT
// RUN: not ftpipe-opt %s --ftpipe-assign-devices 2>&1 | FileCheck %s --check-prefix=NOBLOCKS
// RUN: not ftpipe-opt %s --ftpipe-refine 2>&1 | FileCheck %s --check-prefix=NOPLAN
// RUN: not ftpipe-opt %s --ftpipe-seq-pipe=function=missing 2>&1 | FileCheck %s --check-prefix=NOFUNC

// Tests the user errors shared by the partitioning passes: each names what
// is wrong, and a model that cannot fit names the memory it needs and what
// would help. The weight here (4 MB) needs more than the 1 MB of each device.

// DEVICES: error: devices=3 but hardware 'tiny' has 2 devices
// NOFIT: error: no partitioner found a plan that fits{{$}}
// NOFIT: note: seq-dp: {{.*}}GiB
// NOFIT: note: what may help: more devices, an optimizer with less state (optimizer=sgd), a smaller micro-batch{{$}}
// NOBLOCKS: error: op has no 'ftpipe.block': run --ftpipe-coarsen first
// NOPLAN: error: no plan to refine: run a partitioning pass first
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
