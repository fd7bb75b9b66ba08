// RUN: ftpipe-opt %s --split-input-file --ftpipe-export-graph=file=- -o /dev/null | FileCheck %s
// RUN: ftpipe-opt %s --split-input-file --ftpipe-export-graph=file=%t.json | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=FILE < %t.json

// Tests the exported schema on a planned graph: nodes carry their costs,
// scopes, stages and devices; a value used by two ops of another stage is
// one value with two consumers but two edges; a tied weight is one param
// with two readers; a plan without replicas has no `replicas`; the IR is
// not changed.

// CHECK: "edges": [
// CHECK-DAG: "bytes": 64,{{[[:space:]]*}}"dst": 1,{{[[:space:]]*}}"src": 0
// CHECK-DAG: "bytes": 64,{{[[:space:]]*}}"dst": 2,{{[[:space:]]*}}"src": 0
// CHECK: "nodes": [
// CHECK: "bwd_ms": 0.5,
// CHECK-NEXT: "device": 0,
// CHECK-NEXT: "fwd_ms": 0.25,
// CHECK-NEXT: "id": 0,
// CHECK-NEXT: "op": "tosa.mul",
// CHECK-NEXT: "out_bytes": 64,
// CHECK-NEXT: "param_bytes": 64,
// CHECK-NEXT: "scope": "Model/Embed",
// CHECK-NEXT: "stage": 0
// CHECK: "id": 1,
// CHECK: "scope": "Model/Head[0]",
// CHECK-NEXT: "stage": 1
// CHECK: "params": [
// CHECK-NEXT: {
// CHECK-NEXT: "bytes": 64,
// CHECK-NEXT: "id": 0,
// CHECK-NEXT: "name": "shared.weight",
// CHECK-NEXT: "readers": [
// CHECK-NEXT: 0,
// CHECK-NEXT: 2
// CHECK-NEXT: ]
// CHECK-NOT: "replicas"
// CHECK: "values": [

// The file holds the last split's graph; the IR is printed unchanged.
// FILE: "scope": "func.func[unplanned]/tosa.abs[0]",
// IR-LABEL: func.func @tied
// IR: tosa.mul {{.*}}ftpipe.stage = 0 : i64
// IR-LABEL: func.func @unplanned
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], objective_ms = 1.0, memory_bytes = [0, 0]>
} {
  func.func @tied(%e: tensor<16xf32> {ftpipe.param, ftpipe.name = "shared.weight"}, %x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
    %a = tosa.mul %e, %x {shift = 0 : i8, ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 0.25, bwd_ms = 0.5, param_bytes = 64, act_bytes = 64, out_bytes = 64>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> loc("Model/Embed")
    %b = tosa.abs %a {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 64, out_bytes = 64>} : (tensor<16xf32>) -> tensor<16xf32> loc("Model/Head[0]")
    %c = tosa.mul %a, %e {shift = 0 : i8, ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 64, act_bytes = 128, out_bytes = 64>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> loc("Model/Head[1]")
    return %b, %c : tensor<16xf32>, tensor<16xf32>
  }
}

// -----

// Tests that a replicated plan's layout (issue 28: device 0 run twice)
// exports as `replicas`, one factor per plan device.
// CHECK: "scope": "Model/Replicated"
// CHECK: "replicas": [
// CHECK-NEXT: 2,
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "stage_device": [
// CHECK-NEXT: 0,
// CHECK-NEXT: 1
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "three", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], replicas = [2, 1], objective_ms = 1.0, memory_bytes = [0, 0]>
} {
  func.func @replicated(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = tosa.abs %x {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 16, out_bytes = 16>} : (tensor<4xf32>) -> tensor<4xf32> loc("Model/Replicated")
    %b = tosa.abs %a {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 16, out_bytes = 16>} : (tensor<4xf32>) -> tensor<4xf32> loc("Model/Head")
    return %b : tensor<4xf32>
  }
}

// -----

// Tests that a graph without a plan exports stage and device -1.
// CHECK: "edges": []
// CHECK: "device": -1,
// CHECK: "stage": -1
func.func @unplanned(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tosa.abs %x {ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 16>} : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
