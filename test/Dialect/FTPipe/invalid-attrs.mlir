// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics

// Tests that a negative time in a cost is rejected.
// expected-error @+1 {{'fwd_ms' must be finite and non-negative, got -1.5}}
func.func private @f() attributes {c = #ftpipe.cost<fwd_ms = -1.5, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 0>}

// -----

// Tests that a negative byte count in a cost is rejected.
// expected-error @+1 {{'out_bytes' must be non-negative, got -8}}
func.func private @f() attributes {c = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = -8>}

// -----

// Tests that a device needs memory.
// expected-error @+1 {{device 'gpu' must have a positive 'memory_bytes', got 0}}
func.func private @f() attributes {d = #ftpipe.device<name = "gpu", memory_bytes = 0, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>}

// -----

// Tests that a device needs a compute rate.
// expected-error @+1 {{device 'gpu' must have a positive 'tflops', got 0.0}}
func.func private @f() attributes {d = #ftpipe.device<name = "gpu", memory_bytes = 1, tflops = 0.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>}

// -----

// Tests that a device needs memory bandwidth.
// expected-error @+1 {{device 'gpu' must have a positive 'mem_gbps', got -3.0}}
func.func private @f() attributes {d = #ftpipe.device<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = -3.0, launch_us = 0.0, node = 0>}

// -----

// Tests that a launch overhead is non-negative.
// expected-error @+1 {{'launch_us' must be finite and non-negative, got -1.0}}
func.func private @f() attributes {d = #ftpipe.device<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = -1.0, node = 0>}

// -----

// Tests that a node index is non-negative.
// expected-error @+1 {{'node' must be non-negative, got -1}}
func.func private @f() attributes {d = #ftpipe.device<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = -1>}

// -----

// Tests that a link joins two different devices.
// expected-error @+1 {{link joins device 1 to itself}}
func.func private @f() attributes {l = #ftpipe.link<src = 1, dst = 1, gbps = 1.0, latency_us = 0.0>}

// -----

// Tests that a link has bandwidth.
// expected-error @+1 {{link 0 <-> 1 must have a positive 'gbps', got 0.0}}
func.func private @f() attributes {l = #ftpipe.link<src = 0, dst = 1, gbps = 0.0, latency_us = 0.0>}

// -----

// Tests that link ends are non-negative.
// expected-error @+1 {{'src' must be non-negative, got -1}}
func.func private @f() attributes {l = #ftpipe.link<src = -1, dst = 1, gbps = 1.0, latency_us = 0.0>}

// -----

// Tests that a link latency is non-negative.
// expected-error @+1 {{'latency_us' must be finite and non-negative, got -2.0}}
func.func private @f() attributes {l = #ftpipe.link<src = 0, dst = 1, gbps = 1.0, latency_us = -2.0>}

// -----

// Tests that links name devices of the hardware.
// expected-error @+1 {{link 0 <-> 4 names a device outside 0..0}}
func.func private @f() attributes {h = #ftpipe.hardware<name = "one", devices = [<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>], links = [<src = 0, dst = 4, gbps = 1.0, latency_us = 0.0>]>}

// -----

// Tests that a link is given once, in either direction.
// expected-error @+1 {{link 0 <-> 1 is given twice}}
func.func private @f() attributes {h = #ftpipe.hardware<name = "two", devices = [<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>, <name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>], links = [<src = 0, dst = 1, gbps = 1.0, latency_us = 0.0>, <src = 1, dst = 0, gbps = 2.0, latency_us = 0.0>]>}

// -----

// Tests that a plan places stages on non-negative devices.
// expected-error @+1 {{stage 1 has negative device -1}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0, -1], objective_ms = 1.0, memory_bytes = [0]>}

// -----

// Tests that every device of a plan runs at least once.
// expected-error @+1 {{replicas of device 1 must be 1 to 65536, got 0}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0, 1], replicas = [2, 0], objective_ms = 1.0, memory_bytes = [0, 0]>}

// -----

// Tests that a plan's replicas stay within the runtime's bound.
// expected-error @+1 {{replicas of device 0 must be 1 to 65536, got 1099511627776}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0], replicas = [1099511627776], objective_ms = 1.0, memory_bytes = [0]>}

// -----

// Tests that a plan's replicas name each of its devices.
// expected-error @+1 {{plan has 2 devices but replicas has 1 entries}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0, 1], replicas = [2], objective_ms = 1.0, memory_bytes = [0, 0]>}

// -----

// Tests that a plan's memory figures are non-negative.
// expected-error @+1 {{device 0 has negative memory -5}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0], objective_ms = 1.0, memory_bytes = [-5]>}

// -----

// Tests that a plan's objective is non-negative.
// expected-error @+1 {{'objective_ms' must be finite and non-negative, got -1.0}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0], objective_ms = -1.0, memory_bytes = [0]>}

// -----

// Tests that a plan's partitioning time is non-negative.
// expected-error @+1 {{'seconds' must be finite and non-negative, got -0.5}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0], objective_ms = 1.0, memory_bytes = [0], seconds = -0.5>}

// -----

// Tests that a plan's recompute list has one entry per stage.
// expected-error @+1 {{plan has 2 stages but recompute has 1 entries}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0, 1], recompute = [true], objective_ms = 1.0, memory_bytes = [0, 0]>}

// -----

// Tests that a recompute list holds only true and false.
// expected-error @+2 {{expected 'true' or 'false', got 'maybe'}}
// expected-error @+1 {{failed to parse FTPipe_PlanAttr parameter 'recompute'}}
func.func private @f() attributes {p = #ftpipe.plan<method = "x", stage_device = [0], recompute = [maybe], objective_ms = 1.0, memory_bytes = [0]>}

// -----

// Tests that ftpipe.cost holds a cost.
// expected-error @+1 {{'ftpipe.cost' must be a #ftpipe.cost, got 1 : i64}}
func.func private @f() attributes {ftpipe.cost = 1}

// -----

// Tests that ftpipe.stage holds an integer.
// expected-error @+1 {{'ftpipe.stage' must be an integer, got "a"}}
func.func private @f() attributes {ftpipe.stage = "a"}

// -----

// Tests that ftpipe.block is non-negative.
// expected-error @+1 {{'ftpipe.block' must be non-negative, got -4}}
func.func private @f() attributes {ftpipe.block = -4}

// -----

// Tests that ftpipe.device is non-negative.
// expected-error @+1 {{'ftpipe.device' must be non-negative, got -1}}
func.func private @f() attributes {ftpipe.device = -1}

// -----

// Tests that the hardware lives on a module.
// expected-error @+1 {{'ftpipe.hardware' belongs on a builtin.module, not on 'func.func'}}
func.func private @f() attributes {ftpipe.hardware = #ftpipe.hardware<name = "one", devices = [<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>]>}

// -----

// Tests that ftpipe.hardware holds a hardware description.
// expected-error @+1 {{'ftpipe.hardware' must be a #ftpipe.hardware, got "gpu"}}
module attributes {ftpipe.hardware = "gpu"} {}

// -----

// Tests that ftpipe.plan holds a plan.
// expected-error @+1 {{'ftpipe.plan' must be a #ftpipe.plan, got 3 : i64}}
module attributes {ftpipe.plan = 3} {}

// -----

// Tests that a plan uses only devices of the module's hardware.
// expected-error @+1 {{plan puts stage 1 on device 2 but the hardware has 2 devices}}
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "two", devices = [<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>, <name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>]>,
  ftpipe.plan = #ftpipe.plan<method = "x", stage_device = [0, 2], objective_ms = 1.0, memory_bytes = [0, 0]>} {}

// -----

// Tests that a plan gives memory for every device of the hardware.
// expected-error @+1 {{plan gives memory for 1 devices but the hardware has 2}}
module attributes {
  ftpipe.hardware = #ftpipe.hardware<name = "two", devices = [<name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>, <name = "gpu", memory_bytes = 1, tflops = 1.0, mem_gbps = 1.0, launch_us = 0.0, node = 0>]>,
  ftpipe.plan = #ftpipe.plan<method = "x", stage_device = [0, 1], objective_ms = 1.0, memory_bytes = [0]>} {}

// -----

// Tests that parameter marks belong on function arguments.
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ftpipe.param' belongs on a function argument, not on 'tosa.abs'}}
  %b = tosa.abs %a {ftpipe.param} : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// Tests that misspelt ftpipe attributes are caught.
// expected-error @+1 {{unknown ftpipe attribute 'ftpipe.stages'}}
func.func private @f() attributes {ftpipe.stages = 1}

// -----

// Tests that ftpipe.param is a unit attribute.
// expected-error @+1 {{'ftpipe.param' on argument 0 must be a unit attribute}}
func.func private @f(tensor<4xf32> {ftpipe.param = 1})

// -----

// Tests that a parameter is a float tensor.
// expected-error @+1 {{parameter argument 1 must be a ranked tensor of floats, got 'tensor<4xi32>'}}
func.func private @f(tensor<4xf32>, tensor<4xi32> {ftpipe.param})

// -----

// Tests that a parameter name is a non-empty string.
// expected-error @+1 {{'ftpipe.name' on argument 0 must be a non-empty string}}
func.func private @f(tensor<4xf32> {ftpipe.param, ftpipe.name = ""})

// -----

// Tests that misspelt argument attributes are caught.
// expected-error @+1 {{unknown ftpipe argument attribute 'ftpipe.params'}}
func.func private @f(tensor<4xf32> {ftpipe.params})

// -----

// Tests that `ftpipe.replicate` is a unit attribute.
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ftpipe.replicate' must be a unit attribute}}
  %b = tosa.abs %a {ftpipe.replicate = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// Tests that a training setup needs a micro-batch.
// expected-error @+1 {{a training setup needs at least one micro-batch}}
func.func private @f() attributes {t = #ftpipe.training<schedule = "async", microbatches = 0, optimizer = "adam", weight_versions = "none", recompute = "true">}

// -----

// Tests that a training setup's values are the options' spellings.
// expected-error @+2 {{unknown schedule 'zb' (gpipe, 1f1b, async, zb-h1 or zb-auto)}}
// expected-error @+1 {{failed to parse FTPipe_TrainingAttr parameter 'schedule'}}
func.func private @f() attributes {t = #ftpipe.training<schedule = "zb", microbatches = 4, optimizer = "adam", weight_versions = "none", recompute = "true">}

// -----

// Tests that `ftpipe.padding_row` belongs on a tosa.gather.
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ftpipe.padding_row' belongs on a tosa.gather, not on 'tosa.abs'}}
  %b = tosa.abs %a {ftpipe.padding_row = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// Tests that `ftpipe.padding_row` names a row of the gathered values.
func.func @g(%v: tensor<1x5x3xf32>, %i: tensor<1x4xi32>) -> tensor<1x4x3xf32> {
  // expected-error @+1 {{'ftpipe.padding_row' must be an integer row of the gathered values, got 5 : i64}}
  %y = tosa.gather %v, %i {ftpipe.padding_row = 5 : i64} : (tensor<1x5x3xf32>, tensor<1x4xi32>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}
