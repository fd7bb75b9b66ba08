// RUN: ftpipe-opt %s --ftpipe-report="json=%t.json trace=%t.trace.json dot=%t.dot stashing=stash recompute=false" -o /dev/null | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: FileCheck %s --check-prefix=TRACE < %t.trace.json
// RUN: FileCheck %s --check-prefix=DOT < %t.dot
// RUN: ftpipe-opt %s --ftpipe-report="schedule=gpipe microbatches=4 optimizer=sgd stashing=stash recompute=false" -o /dev/null | FileCheck %s --check-prefix=GPIPE
// RUN: ftpipe-model-gen t5-tiny --loss --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-mixed-pipe=devices=4 --ftpipe-report="json=-" -o /dev/null | FileCheck %s --check-prefix=FORWARDED

// Tests that the report counts the ops whose results are forwarded from
// reader to reader (t5-tiny on Mixed-Pipe's plan for 4 devices forwards the
// encoder's position bias) and the bytes passed on between devices.
// FORWARDED: 1 ops forwarded: their results pass from each stage that reads them to the next ({{[0-9.]+}} MiB passed on between devices per micro-batch)
// FORWARDED: "forwarded_ops": 1

// Tests the report on a plan with two non-adjacent stages on one device:
// stages 0 and 2 on device 0, stage 1 on device 1. The link moves 1e6 bytes
// per ms, so each 4 KiB activation (and its gradient) takes 0.004096 ms each
// way; compute covers it, so nothing is exposed. Stage 0 starts the pipeline,
// so it keeps 3 micro-batches in flight (PipeDream's depth rule).

// CHECK: FTPipe partition report: 'hand' plan of @chain on pair (2 devices)
// CHECK: setup: async (PipeDream 1F1B) schedule, adam, weight stashing, no recomputation, M = 8
// CHECK: 4 ops, 3 stages, total compute 9.00 ms per micro-batch
// CHECK: stage device
// CHECK-NEXT: {{^ *}}0 0 3.000 0.004 0.004 0.000 3.000 3
// CHECK-NEXT: {{^ *}}1 1 4.000 0.008 0.008 0.000 4.000 2
// CHECK-NEXT: {{^ *}}2 0 2.000 0.004 0.004 0.000 2.000 1
// CHECK: device stages
// CHECK-NEXT: {{^ *}}0 2 5.000 0.000 5.000
// CHECK-NEXT: {{^ *}}1 1 4.000 0.000 4.000
// CHECK: async time per micro-batch : 5.000 ms (bottleneck: device 0)
// The simulator agrees here: device 0's two stages never wait on device 1.
// CHECK: simulated async time : 5.000 ms per micro-batch (objective / simulated = 1.000)
// CHECK: lower bound : 4.500 ms (async / bound = 1.111)
// CHECK: imbalance (busiest / mean) : 1.111
// CHECK: memory : fits on every device

// JSON: "async_ms_per_microbatch": 5,
// JSON: "async_sim_ms_per_microbatch": 5,
// JSON: "imbalance": 1.1111
// JSON: "lower_bound_ms": 4.5,
// JSON: "method": "hand",
// JSON: "microbatches": 8,
// JSON: "per_device": [
// JSON: "compute_ms": 5,
// JSON: "device": 0,
// JSON: "load_ms": 5,
// Device 0 holds both weights (4096 + 16 bytes), their gradients, two Adam
// moments and, for stage 0 with 3 micro-batches in flight, 2 stashed versions
// of its 4096-byte weight: 4112 * 4 + 8192 = 24640 bytes.
// JSON: "memory_budget_bytes": 1000000,
// JSON-NEXT: "memory_bytes": 24640,
// JSON-NEXT: "optimizer_bytes": 8224,
// JSON-NEXT: "param_bytes": 4112,
// JSON: "stage_device": [
// JSON-NEXT: 0,
// JSON-NEXT: 1,
// JSON-NEXT: 0
// JSON-NEXT: ],
// JSON: "stages": 3

// TRACE-DAG: "name":"device 0 (g0)"
// TRACE-DAG: "name":"link 0->1"
// TRACE-DAG: "name":"F s1 mb0"

// DOT: digraph stages {
// DOT-DAG: s0 [label="stage 0\ndevice 0\n3.00 ms", fillcolor="#8dd3c7"];
// DOT-DAG: s1 [label="stage 1\ndevice 1\n4.00 ms", fillcolor="#ffffb3"];
// DOT-DAG: s2 [label="stage 2\ndevice 0\n2.00 ms", fillcolor="#8dd3c7"];
// DOT-DAG: s0 -> s1 [label="0.00 MiB"];
// DOT-DAG: s1 -> s2 [label="0.00 MiB"];

// GPIPE: setup: GPipe schedule, sgd, weight stashing, no recomputation, M = 4
// Device 0 runs 5 ms of stages per micro-batch, so 4 micro-batches take at
// least 20 ms.
// GPIPE: GPipe per mini-batch : {{2[0-9]\.[0-9]+}} ms (M = 4

module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1, 0], objective_ms = 5.0, memory_bytes = [0, 0]>
} {
  func.func @chain(%w: tensor<4xf32> {ftpipe.param}, %x: tensor<1024xf32> {ftpipe.param}) -> tensor<1024xf32> {
    %a = tosa.abs %x {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 0, out_bytes = 4096>} : (tensor<1024xf32>) -> tensor<1024xf32>
    %b = tosa.tanh %a {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 2.0, bwd_ms = 2.0, param_bytes = 0, act_bytes = 0, out_bytes = 4096>} : (tensor<1024xf32>) -> tensor<1024xf32>
    %r = tosa.reshape %w {ftpipe.stage = 2, ftpipe.cost = #ftpipe.cost<fwd_ms = 0.0, bwd_ms = 0.0, param_bytes = 16, act_bytes = 0, out_bytes = 16>, new_shape = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
    %c = tosa.negate %b {ftpipe.stage = 2, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 4096>} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %c : tensor<1024xf32>
  }
}
