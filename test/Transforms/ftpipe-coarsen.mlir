// RUN: ftpipe-opt %s --ftpipe-coarsen="stages=2 block-types=Layer" | FileCheck %s
// RUN: ftpipe-opt %s --ftpipe-coarsen="stages=4 block-types=Layer" | FileCheck %s --check-prefix=FOUR

// Tests coarsening by prefix: the two ops of each `Layer[i]` instance always
// share a block; with L = 2 the four equal layers pair up in order, with
// L = 4 every layer is its own block.

// CHECK-LABEL: func.func @layers
// CHECK: tosa.abs {{.*}}ftpipe.block = [[FIRST:[0-9]+]] : i64
// CHECK-NEXT: tosa.abs {{.*}}ftpipe.block = [[FIRST]] : i64
// CHECK-NEXT: tosa.abs {{.*}}ftpipe.block = [[FIRST]] : i64
// CHECK-NEXT: tosa.abs {{.*}}ftpipe.block = [[FIRST]] : i64
// CHECK-NEXT: tosa.abs {{.*}}ftpipe.block = [[SECOND:[0-9]+]] : i64
// CHECK-NEXT: tosa.abs {{.*}}ftpipe.block = [[SECOND]] : i64
// CHECK-NEXT: tosa.abs {{.*}}ftpipe.block = [[SECOND]] : i64
// CHECK-NEXT: tosa.abs {{.*}}ftpipe.block = [[SECOND]] : i64

// FOUR-LABEL: func.func @layers
// FOUR: ftpipe.block = [[L0:[0-9]+]] : i64
// FOUR-NEXT: ftpipe.block = [[L0]] : i64
// FOUR-NEXT: ftpipe.block = [[L1:[0-9]+]] : i64
// FOUR-NEXT: ftpipe.block = [[L1]] : i64
// FOUR-NEXT: ftpipe.block = [[L2:[0-9]+]] : i64
// FOUR-NEXT: ftpipe.block = [[L2]] : i64
// FOUR-NEXT: ftpipe.block = [[L3:[0-9]+]] : i64
// FOUR-NEXT: ftpipe.block = [[L3]] : i64
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000.0, latency_us = 0.0>]>
} {
  func.func @layers(%x: tensor<16xf32>) -> tensor<16xf32> {
    %0 = tosa.abs %x {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[0]/A")
    %1 = tosa.abs %0 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[0]/B")
    %2 = tosa.abs %1 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[1]/A")
    %3 = tosa.abs %2 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[1]/B")
    %4 = tosa.abs %3 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[2]/A")
    %5 = tosa.abs %4 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[2]/B")
    %6 = tosa.abs %5 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[3]/A")
    %7 = tosa.abs %6 {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Layer[3]/B")
    return %7 : tensor<16xf32>
  }
}
