// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-outline-stages

// Tests that an unpartitioned module is refused with a hint.

// expected-error @+1 {{no function has ops with stages: partition the model first}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// Tests that every op of a partitioned function needs a stage.

module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], objective_ms = 1.0, memory_bytes = [10], seconds = 0.0>} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = tosa.abs %x {ftpipe.stage = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error @+1 {{op has no 'ftpipe.stage' in a partitioned function}}
    %z = tosa.abs %y : (tensor<4xf32>) -> tensor<4xf32>
    return %z : tensor<4xf32>
  }
}

// -----

// Tests that a stage the plan does not place is refused at the op.

module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], objective_ms = 1.0, memory_bytes = [10], seconds = 0.0>} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{op is in stage 3 but the plan places only 1 stages}}
    %y = tosa.abs %x {ftpipe.stage = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// Tests that a forwarded value whose readers do not depend on each other (two
// branches) is refused at the op.

module attributes {ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [0, 1, 2, 0], objective_ms = 1.0, memory_bytes = [10, 10, 10], seconds = 0.0>} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'ftpipe.forward' op's result #0 is read by stages 1 and 2, which do not depend on each other}}
    %b = tosa.abs %x {ftpipe.forward, ftpipe.stage = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    %l = tosa.negate %b {ftpipe.stage = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    %r = tosa.exp %b {ftpipe.stage = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    %y = tosa.add %l, %r {ftpipe.stage = 3 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
