// RUN: ftpipe-opt %s --ftpipe-report="json=%t.json schedule=1f1b microbatches=4 optimizer=sgd recompute=false" -o /dev/null | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json

// The report's GPipe and 1F1B rows are the lists ftpipe-run runs
// (schedule::generate, which interleaves each device's stages in unit
// time), simulated on the plan's costs. Stages 0 and 2 share device g0
// (F 1 ms, B 2 ms each), stage 1 has device g1 to itself (F 2 ms, B 4 ms),
// M = 4, free links:
//  - 1F1B's lists are, on g0, 0F0 0F1 2F0 2B0 2F1 2B1 0F2 0B0 2F2 2B2 0F3
//    0B1 2F3 0B2 2B3 0B3, and on g1 1F0 1F1 1B0 1F2 1B1 1F3 1B2 1B3: 32 ms,
//    where the simulator's own 1F1B, which runs each device's stages as they
//    become ready, takes 28;
//  - GPipe's lists take 36 ms (the simulator's own order: 30).
// Before 2026-11-27 the rows showed the simulator's own orders, which the
// runtime does not run (on T5-3B's plan, M = 8: 5396 ms against the 7670 ms
// of the lists it runs).

// CHECK: GPipe per mini-batch : 36.000 ms (M = 4
// CHECK-NEXT: 1F1B per mini-batch : 32.000 ms (M = 4
// CHECK: schedule ms_per_minibatch idle_% max_memory_GiB memory_GiB per device
// CHECK-NEXT: gpipe 36.000
// CHECK-NEXT: 1f1b 32.000
// JSON: "gpipe_ms_per_minibatch": 36.0000000{{[0-9]*}},
// JSON: "onef1b_ms_per_minibatch": 32.0000000{{[0-9]*}},

module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000000.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1, 0], objective_ms = 6.0, memory_bytes = [0, 0]>
} {
  func.func @vee(%u: tensor<1xf32> {ftpipe.param}, %v: tensor<1xf32> {ftpipe.param}, %w: tensor<1xf32> {ftpipe.param}, %x: tensor<250xf32>) -> tensor<250xf32> {
    %a = tosa.add %x, %u {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %b = tosa.add %a, %v {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 2.0, bwd_ms = 4.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %c = tosa.add %b, %w {ftpipe.stage = 2, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    return %c : tensor<250xf32>
  }
}
