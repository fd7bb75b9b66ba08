// RUN: ftpipe-opt %s | FileCheck %s
// RUN: ftpipe-opt %s | ftpipe-opt | FileCheck %s
// RUN: ftpipe-opt %s --mlir-print-op-generic | ftpipe-opt | FileCheck %s

// Tests that every ftpipe attribute round-trips: the hardware and plan on the
// module, costs, blocks, stages and devices on ops, and parameter marks on
// function arguments.

// CHECK: module attributes {
// CHECK-SAME: ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [<name = "rtx2080ti", memory_bytes = 11811160064, tflops = 13.4, mem_gbps = 616.0, launch_us = 5.0, node = 0>, <name = "rtx2080ti", memory_bytes = 11811160064, tflops = 13.4, mem_gbps = 616.0, launch_us = 5.0, node = 1>], links = [<src = 0, dst = 1, gbps = 12.0, latency_us = 10.0>]>
// CHECK-SAME: ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = 2.5, memory_bytes = [1024, 2048], seconds = 0.25>
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair",
    devices = [#ftpipe.device<name = "rtx2080ti", memory_bytes = 11811160064, tflops = 13.4, mem_gbps = 616.0, launch_us = 5.0, node = 0>,
               #ftpipe.device<name = "rtx2080ti", memory_bytes = 11811160064, tflops = 13.4, mem_gbps = 616, launch_us = 5.0, node = 1>],
    links = [#ftpipe.link<src = 0, dst = 1, gbps = 12.0, latency_us = 10.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = 2.5, memory_bytes = [1024, 2048], seconds = 0.25>
} {
  // CHECK-LABEL: func.func @f
  // CHECK-SAME: %{{.*}}: tensor<4x4xf32> {ftpipe.name = "layer.weight", ftpipe.param}
  func.func @f(%w: tensor<4x4xf32> {ftpipe.param, ftpipe.name = "layer.weight"}, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // CHECK: tosa.matmul
    // CHECK-SAME: ftpipe.block = 2 : i64
    // CHECK-SAME: ftpipe.cost = #ftpipe.cost<fwd_ms = 0.125, bwd_ms = 2.5e-05, param_bytes = 64, act_bytes = 128, out_bytes = 64>
    // CHECK-SAME: ftpipe.device = 1 : i64
    // CHECK-SAME: ftpipe.stage = 1 : i64
    %a = tosa.reshape %w {new_shape = array<i64: 1, 4, 4>} : (tensor<4x4xf32>) -> tensor<1x4x4xf32>
    %b = tosa.reshape %x {new_shape = array<i64: 1, 4, 4>} : (tensor<4x4xf32>) -> tensor<1x4x4xf32>
    %c = tosa.matmul %a, %b {ftpipe.cost = #ftpipe.cost<fwd_ms = 0.125, bwd_ms = 0.000025, param_bytes = 64, act_bytes = 128, out_bytes = 64>, ftpipe.block = 2, ftpipe.stage = 1, ftpipe.device = 1} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %d = tosa.reshape %c {new_shape = array<i64: 4, 4>} : (tensor<1x4x4xf32>) -> tensor<4x4xf32>
    return %d : tensor<4x4xf32>
  }
}

// A hardware description without links prints without the links field.
// CHECK-LABEL: func.func private @no_links
// CHECK-SAME: hw = #ftpipe.hardware<name = "one", devices = [<name = "cpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>]>
func.func private @no_links() attributes {hw = #ftpipe.hardware<name = "one", devices = [#ftpipe.device<name = "cpu", memory_bytes = 1, tflops = 1, mem_gbps = 1, launch_us = 0, node = 0>]>}

// A plan without a partitioning time prints without the seconds field.
// CHECK-LABEL: func.func private @no_seconds
// CHECK-SAME: p = #ftpipe.plan<method = "hand", stage_device = [0], objective_ms = 1.0, memory_bytes = [0]>}
func.func private @no_seconds() attributes {p = #ftpipe.plan<method = "hand", stage_device = [0], objective_ms = 1.0, memory_bytes = [0], seconds = 0.0>}

// A plan that chooses recomputation per stage keeps its list; an empty list
// means every stage recomputes and prints as none.
// CHECK-LABEL: func.func private @per_stage_recompute
// CHECK-SAME: p = #ftpipe.plan<method = "auto", stage_device = [0, 1, 0], recompute = [true, false, false], objective_ms = 1.0, memory_bytes = [0, 0], seconds = 0.5>}
func.func private @per_stage_recompute() attributes {p = #ftpipe.plan<method = "auto", stage_device = [0, 1, 0], recompute = [true, false, false], objective_ms = 1.0, memory_bytes = [0, 0], seconds = 0.5>}
// CHECK-LABEL: func.func private @empty_recompute
// CHECK-SAME: p = #ftpipe.plan<method = "hand", stage_device = [0], objective_ms = 1.0, memory_bytes = [0]>}
func.func private @empty_recompute() attributes {p = #ftpipe.plan<method = "hand", stage_device = [0], recompute = [], objective_ms = 1.0, memory_bytes = [0]>}

// A plan keeps each device's replicas: two identical pipelines, or the
// middle device alone twice; without the list every device runs once.
// CHECK-LABEL: func.func private @replicated
// CHECK-SAME: p = #ftpipe.plan<method = "mixed-pipe", stage_device = [0, 1], replicas = [2, 2], objective_ms = 1.0, memory_bytes = [0, 0]>}
func.func private @replicated() attributes {p = #ftpipe.plan<method = "mixed-pipe", stage_device = [0, 1], replicas = [2, 2], objective_ms = 1.0, memory_bytes = [0, 0]>}
// CHECK-LABEL: func.func private @per_device
// CHECK-SAME: replicas = [1, 2, 1],
func.func private @per_device() attributes {p = #ftpipe.plan<method = "mixed-pipe", stage_device = [0, 1, 2], replicas = [1, 2, 1], objective_ms = 1.0, memory_bytes = [0, 0, 0]>}
// CHECK-LABEL: func.func private @one_pipeline
// CHECK-SAME: p = #ftpipe.plan<method = "hand", stage_device = [0], objective_ms = 1.0, memory_bytes = [0]>}
func.func private @one_pipeline() attributes {p = #ftpipe.plan<method = "hand", stage_device = [0], objective_ms = 1.0, memory_bytes = [0]>}

// A training setup prints each value as the passes' options spell it.
// CHECK-LABEL: func.func private @training_setup
// CHECK-SAME: t = #ftpipe.training<schedule = "1f1b", microbatches = 4, optimizer = "adamw", weight_versions = "2bw", recompute = "auto">}
func.func private @training_setup() attributes {t = #ftpipe.training<schedule = "1f1b", microbatches = 4, optimizer = "adamw", weight_versions = "2bw", recompute = "auto">}
