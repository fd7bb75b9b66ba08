// RUN: ftpipe-opt %s --ftpipe-assign-devices="optimizer=sgd recompute=false" | FileCheck %s

// Tests the non-adjacent placement of two stages on one device. Four blocks
// in a chain cost 3, 3, 1 and 1 ms. Largest first: block 0 -> device 0,
// block 1 -> device 1; block 2 ties and follows its neighbour to device 1;
// block 3 goes to the less loaded device 0. Device 0 then holds blocks 0 and
// 3, which cannot be one stage (the path 0 -> 1 -> 2 -> 3 would make a cycle),
// so they are stages 0 and 2 on the same device.

// CHECK: ftpipe.plan = #ftpipe.plan<method = "mixed-assign", stage_device = [0, 1, 0], recompute = [false, false, false], objective_ms = 4.0,
// CHECK-LABEL: func.func @blocks
// CHECK: ftpipe.block = 0 {{.*}}ftpipe.stage = 0 : i64
// CHECK: ftpipe.block = 1 {{.*}}ftpipe.stage = 1 : i64
// CHECK: ftpipe.block = 2 {{.*}}ftpipe.stage = 1 : i64
// CHECK: ftpipe.block = 3 {{.*}}ftpipe.stage = 2 : i64
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000.0, latency_us = 0.0>]>
} {
  func.func @blocks(%x: tensor<16xf32>) -> tensor<16xf32> {
    %0 = tosa.abs %x {ftpipe.block = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 3.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %1 = tosa.abs %0 {ftpipe.block = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 3.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %2 = tosa.abs %1 {ftpipe.block = 2, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    %3 = tosa.abs %2 {ftpipe.block = 3, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32>
    return %3 : tensor<16xf32>
  }
}
