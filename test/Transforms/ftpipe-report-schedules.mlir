// RUN: ftpipe-opt %s --ftpipe-report="json=%t.json schedule=zb-h1 microbatches=4 optimizer=sgd recompute=false" -o /dev/null | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: ftpipe-opt %s --ftpipe-report="schedule=zb-auto microbatches=4 optimizer=sgd recompute=false" -o /dev/null | FileCheck %s --check-prefix=AUTO
// RUN: ftpipe-opt %s --ftpipe-report="replicas=auto schedule=1f1b microbatches=4 optimizer=sgd recompute=false json=%t.replicas.json" -o /dev/null | FileCheck %s --check-prefix=REPLICAS
// RUN: FileCheck %s --check-prefix=REPLICAS-JSON < %t.replicas.json
// RUN: ftpipe-opt %s --ftpipe-report="replicas=2 schedule=1f1b microbatches=4 optimizer=sgd recompute=false" -o /dev/null | FileCheck %s --check-prefix=WIDTH
// RUN: not ftpipe-opt %s --ftpipe-report="replicas=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: sed 's/memory_bytes = 1000000/memory_bytes = 6000/' %s | ftpipe-opt --ftpipe-report="schedule=1f1b microbatches=4 optimizer=sgd recompute=false json=%t.bounded.json" -o /dev/null | FileCheck %s --check-prefix=BOUNDED
// RUN: FileCheck %s --check-prefix=BOUNDED-JSON < %t.bounded.json

// Tests the report's schedules side by side on a two-stage pipeline whose
// stages each take F = 1 ms and B = 2 ms, of which W = 1 ms makes the weight
// gradients (`bwd_weight_ms`), with M = 4 and links that cost nothing worth
// printing:
//  - GPipe and 1F1B with flush: (M + p - 1)(F + B) = 15 ms, each device busy
//    12 of them (20 % idle);
//  - ZB-H1 moves each W into an idle slot where its W buffer fits within
//    the device's peak under 1F1B: the bubble (p - 1)(F + I + W) = 3 ms
//    would shrink to (p - 1)(F + I - W) = 1 ms (the ZB paper's
//    (p-1)(F+B-W), its B being our I: 13 ms, the ZB-H1 bound line), but
//    here no W buffer fits (below), so both stages run whole: 1F1B's 15 ms;
//  - memory: each stage keeps 1000 bytes of activations per micro-batch in
//    flight, and a split backward's input part keeps 1000 + 1000 bytes (the
//    op's saved activations and its result's gradient) for its weight part;
//    each device has 4 bytes of weight and 4 of gradient (SGD). The table
//    shows each schedule's lists' peak (their dry run): GPipe 4 micro-batches
//    (4000), 1F1B 2 on stage 0 and 1 on stage 1 (2000, 1000). An I at 1F1B's
//    most micro-batches in flight adds its W buffer (2000) to 1F1B's peak,
//    so ZB-H1 within 1F1B's memory runs each stage's backward whole (B):
//    1F1B's lists and bytes, which are also the plan's figure under zb-h1.
//    Deferring every W (zb-h1 before 2026-11-27) held 8000 and 9000 bytes.
//  - no synchronous step is shorter than 13 ms (the step lower bound: device
//    1 waits F = 1 ms for its first forward, then has M (F + I + W) = 12 ms of
//    work), which zb-auto reaches.

// CHECK: setup: zero-bubble ZB-H1 (split backward) schedule, sgd, {{.*}} M = 4
// CHECK: sync step lower bound : 13.000 ms (device 1: 12.000 ms of work, 1.000 ms of fill and drain; any schedule, memory unbounded)
// CHECK: schedule ms_per_minibatch idle_% max_memory_GiB memory_GiB per device
// CHECK-NEXT: gpipe 15.000 20.0
// CHECK-NEXT: 1f1b 15.000 20.0
// CHECK-NEXT: zb-h1 15.000 20.0
// CHECK-NEXT: zb-auto 13.000
// CHECK-NEXT: async

// The plan's own figures (what the partitioners' memory check counts) are
// 1F1B's under the setup's zb-h1: 2008 and 1008 bytes.
// JSON: "per_device": [
// JSON: "memory_bytes": 2008,
// JSON: "memory_bytes": 1008,
// JSON: "schedules": [
// JSON-NEXT: {
// JSON-NEXT: "idle_fraction": 0.2{{0*[0-9]*}},
// JSON-NEXT: "memory_bytes": [
// JSON-NEXT: 4008,
// JSON-NEXT: 4008
// JSON-NEXT: ],
// JSON-NEXT: "memory_fits": true,
// JSON-NEXT: "ms_per_minibatch": 15.0000{{[0-9]*}},
// JSON-NEXT: "schedule": "gpipe"
// JSON-NEXT: },
// JSON-NEXT: {
// JSON-NEXT: "idle_fraction": 0.2{{0*[0-9]*}},
// JSON-NEXT: "memory_bytes": [
// JSON-NEXT: 2008,
// JSON-NEXT: 1008
// JSON-NEXT: ],
// JSON: "schedule": "1f1b"
// JSON: "memory_bytes": [
// JSON-NEXT: 2008,
// JSON-NEXT: 1008
// JSON-NEXT: ],
// JSON: "ms_per_minibatch": 15.0000{{[0-9]*}},
// JSON-NEXT: "schedule": "zb-h1"
// JSON: "step_lower_bound": {
// JSON-NEXT: "busy_ms": 12,
// JSON-NEXT: "device": 1,
// JSON-NEXT: "ms_per_minibatch": 13

// zb-auto, not bound to 1F1B's memory, defers Ws (no slower than ZB-H1
// deferring every W: 13 ms).
// AUTO: setup: zero-bubble list schedule from stage costs {{.*}} M = 4
// AUTO: zb-h1 15.000
// AUTO-NEXT: zb-auto {{(1[0-2]\.[0-9]+|13\.000)}}

// replicas=auto: the two devices as a pipeline of 2 (1F1B: 15 ms) or as 2
// replicas of the whole model, each running 2 of the 4 micro-batches
// through both ops (2 x 6 ms) and all-reducing 8 bytes: chosen, from the
// first partitioner's options (every partitioner plans alike here).
// REPLICAS: replicas (each partitioner's plan on depth devices, each run on its replicas: one number for all, or one per device; M = 4
// REPLICAS-NEXT: method depth replicas objective_ms allreduce_ms ms_per_minibatch idle_%
// REPLICAS-NEXT: seq-dp 2 1 3.000 0.000 15.000 20.0 {{$}}
// REPLICAS-NEXT: seq-dp 1 2 3.000 0.000 12.000 0.0 chosen
// REPLICAS: mixed-pipe 1 2 3.000 0.000 12.000 0.0 {{$}}
// replicas=2: the options of 2 identical pipelines (of depth 1) alone.
// WIDTH: method depth replicas objective_ms allreduce_ms ms_per_minibatch idle_%
// WIDTH-NEXT: seq-dp 1 2 3.000 0.000 12.000 0.0 chosen
// WIDTH-NOT: {{^}}seq-dp 2
// WIDTH: mixed-pipe 1 2 3.000 0.000 12.000 0.0 {{$}}
// WIDTH-NOT: {{^[a-z-]+ +2 }}
// REPLICAS-JSON: "replica_options": [
// REPLICAS-JSON: "chosen": false,
// REPLICAS-JSON-NEXT: "depth": 2,
// REPLICAS-JSON: "method": "seq-dp",
// REPLICAS-JSON: "chosen": true,
// REPLICAS-JSON-NEXT: "depth": 1,
// REPLICAS-JSON: "replicas": [
// REPLICAS-JSON-NEXT: 2
// REPLICAS-JSON-NEXT: ]
// zb-auto within each device's memory: on devices of 6000 bytes (8 of them
// the weight and its gradient), ZB-H1 deferring every W would need 8008 and
// 9008 bytes (within 1F1B's it fits, at 1F1B's 15 ms) and zb-auto's fastest
// (13 ms, 6008 and 9008 bytes on the 1 MB devices above) does not fit
// either; the report takes zb-auto's fastest lists that keep
// every device within its budget: 13 ms in 4008 and 5008 bytes (14 ms in
// 4008 and 3008 before its list scheduler ran a ready W first near the
// budget).
// BOUNDED: zb-h1 15.000 20.0 {{[0-9. ]+$}}
// BOUNDED-NEXT: zb-auto 13.000 7.7 {{[0-9. ]+$}}
// BOUNDED-JSON: "schedule": "zb-h1"
// BOUNDED-JSON: "memory_bytes": [
// BOUNDED-JSON-NEXT: 4008,
// BOUNDED-JSON-NEXT: 5008
// BOUNDED-JSON-NEXT: ],
// BOUNDED-JSON-NEXT: "memory_fits": true,
// BOUNDED-JSON-NEXT: "ms_per_minibatch": 13.0000{{[0-9]*}},
// BOUNDED-JSON-NEXT: "schedule": "zb-auto"
// BAD: for the --replicas option: replicas: '0' is not a replication factor (1 to 65536); the passes take none, auto, a number of identical pipelines W or a factor per plan device r0,r1,...

module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "pair", devices = [
    <name = "g0", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>,
    <name = "g1", memory_bytes = 1000000, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>],
    links = [<src = 0, dst = 1, gbps = 1000000.0, latency_us = 0.0>]>,
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], objective_ms = 3.0, memory_bytes = [0, 0]>
} {
  func.func @chain(%w: tensor<1xf32> {ftpipe.param}, %v: tensor<1xf32> {ftpipe.param}, %x: tensor<250xf32>) -> tensor<250xf32> {
    %a = tosa.add %x, %w {ftpipe.stage = 0, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000, bwd_weight_ms = 1.0>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    %b = tosa.add %a, %v {ftpipe.stage = 1, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 2.0, param_bytes = 4, act_bytes = 1000, out_bytes = 1000, bwd_weight_ms = 1.0>} : (tensor<250xf32>, tensor<1xf32>) -> tensor<250xf32>
    return %b : tensor<250xf32>
  }
}
