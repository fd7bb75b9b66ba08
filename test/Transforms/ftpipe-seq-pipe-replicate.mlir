// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --ftpipe-seq-pipe="optimizer=sgd recompute=false" | FileCheck %s
// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --ftpipe-seq-pipe="optimizer=sgd recompute=false replicate=false" | FileCheck %s --check-prefix=SENT
// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --ftpipe-seq-pipe="optimizer=sgd recompute=false" --ftpipe-report="optimizer=sgd recompute=false" | FileCheck %s --check-prefix=REPORT
// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --ftpipe-seq-pipe="optimizer=sgd recompute=false" --ftpipe-outline-stages | FileCheck %s --check-prefix=OUTLINE

// Tests that the partitioner replicates a cheap value (a 16 KiB "bias" made
// from a data input in 0.01 ms) that four layers of 5 ms read, when sending
// it over the slow link (16.4 ms) would be exposed: two stages, the bias op
// marked `ftpipe.replicate` and made again in stage 1, 10.01 ms per
// micro-batch instead of 16.64 ms with replicate=false. A layer (5 ms) is
// not cheaper than sending its 256-byte result, so it is not replicated.

// CHECK: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], recompute = [false, false], objective_ms = 10.01{{[0-9]*}},
// CHECK: tosa.abs %{{.*}} {{{.*}}ftpipe.replicate, ftpipe.stage = 0 : i64}
// CHECK-COUNT-2: ftpipe.stage = 0 : i64
// CHECK-COUNT-2: ftpipe.stage = 1 : i64

// SENT: objective_ms = 16.6{{[0-9]*}},
// SENT-NOT: ftpipe.replicate

// REPORT: 1 ops replicated: made in every stage that reads them, not sent
// REPORT: lower bound with memory    : 10.005 ms

// OUTLINE-LABEL: func.func private @stage1
// OUTLINE-SAME: {ftpipe.input = "mask"}
// OUTLINE-SAME: %[[H:[^:]*]]: tensor<1x1x64xf32> {ftpipe.from_stage = 0 : i64})
// OUTLINE: %[[B:.*]] = tosa.abs
// OUTLINE: tosa.matmul %[[H]], %[[B]]
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "slow-pair", devices = [
    <name = "g0", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 0.001, latency_us = 0.0>]>
} {
  func.func @layers(%x: tensor<1x1x64xf32> loc("x"), %mask: tensor<1x64x64xf32> loc("mask")) -> tensor<1x1x64xf32> {
    %b = tosa.abs %mask {ftpipe.cost = #ftpipe.cost<fwd_ms = 0.01, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 16384>} : (tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
    %0 = tosa.matmul %x, %b {ftpipe.cost = #ftpipe.cost<fwd_ms = 5.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 256>} : (tensor<1x1x64xf32>, tensor<1x64x64xf32>) -> tensor<1x1x64xf32>
    %1 = tosa.matmul %0, %b {ftpipe.cost = #ftpipe.cost<fwd_ms = 5.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 256>} : (tensor<1x1x64xf32>, tensor<1x64x64xf32>) -> tensor<1x1x64xf32>
    %2 = tosa.matmul %1, %b {ftpipe.cost = #ftpipe.cost<fwd_ms = 5.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 256>} : (tensor<1x1x64xf32>, tensor<1x64x64xf32>) -> tensor<1x1x64xf32>
    %3 = tosa.matmul %2, %b {ftpipe.cost = #ftpipe.cost<fwd_ms = 5.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 256>} : (tensor<1x1x64xf32>, tensor<1x64x64xf32>) -> tensor<1x1x64xf32>
    return %3 : tensor<1x1x64xf32>
  }
}
