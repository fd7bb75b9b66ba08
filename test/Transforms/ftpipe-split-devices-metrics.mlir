// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-outline-stages --ftpipe-differentiate --ftpipe-split-devices | FileCheck %s

// Tests a model that returns an evaluation metric beside its loss
// (ftpipe-model-gen --metrics): the plan put the metric's argmax in stage 0,
// ftpipe-outline-stages moves it to the loss's stage 1, whose forward entry
// point returns it after the loss (`ftpipe.metric`); stage 0 returns none,
// and no gradient is seeded or sent for it.

// CHECK-LABEL: func.func private @stage0(
// CHECK-NOT: tosa.argmax
// CHECK: return
// CHECK-LABEL: func.func private @stage1(
// CHECK-SAME: -> (tensor<1x2xi32>, tensor<f32> {ftpipe.active, ftpipe.loss})
// CHECK: tosa.argmax
// CHECK-LABEL: func.func @stage0_forward
// CHECK-NOT: ftpipe.metric
// CHECK-LABEL: func.func @stage1_forward
// CHECK-SAME: -> (tensor<f32> {ftpipe.loss}, tensor<1x2xi32> {ftpipe.metric = "predicted"}, tensor<1x2x2xf32> {ftpipe.saved = 0 : i64})
// CHECK: %[[R:.*]]:2 = call @stage1(
// CHECK: return %[[R]]#1, %[[R]]#0,
// CHECK-LABEL: func.func @stage1_backward
// CHECK: %[[SEED:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<f32>}>
// CHECK: call @stage1_adjoint({{.*}}, %[[SEED]])
module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = 1.0, memory_bytes = [10, 10], seconds = 0.0>} {
  func.func @model(%w: tensor<2x2xf32> {ftpipe.name = "w", ftpipe.param} loc("w"), %v: tensor<1x1x2xf32> {ftpipe.name = "v", ftpipe.param} loc("v"), %x: tensor<1x2x2xf32> loc("x")) -> (tensor<f32>, tensor<1x2xi32> {ftpipe.metric = "predicted"}) {
    %w3 = tosa.reshape %w {ftpipe.stage = 0 : i64, new_shape = array<i64: 1, 2, 2>} : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
    %y = tosa.matmul %x, %w3 {ftpipe.stage = 0 : i64} : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
    %p = tosa.argmax %y {axis = 2 : i32, ftpipe.stage = 0 : i64} : (tensor<1x2x2xf32>) -> tensor<1x2xi32>
    %t = tosa.tanh %y {ftpipe.stage = 1 : i64} : (tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
    %u = tosa.mul %t, %v {ftpipe.stage = 1 : i64, shift = 0 : i8} : (tensor<1x2x2xf32>, tensor<1x1x2xf32>) -> tensor<1x2x2xf32>
    %s = tosa.reduce_sum %u {axis = 2 : i32, ftpipe.stage = 1 : i64} : (tensor<1x2x2xf32>) -> tensor<1x2x1xf32>
    %s2 = tosa.reduce_sum %s {axis = 1 : i32, ftpipe.stage = 1 : i64} : (tensor<1x2x1xf32>) -> tensor<1x1x1xf32>
    %l = tosa.reshape %s2 {ftpipe.stage = 1 : i64, new_shape = array<i64>} : (tensor<1x1x1xf32>) -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<1x2xi32>
  }
}

// -----

// A second result that is not named as a metric is refused.
module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], objective_ms = 1.0, memory_bytes = [10], seconds = 0.0>} {
  // expected-error @+1 {{'model' must return only its loss (and metrics named by 'ftpipe.metric') to be split into training entry points (generate it with --loss)}}
  func.func @model(%v: tensor<2xf32> {ftpipe.name = "v", ftpipe.param} loc("v"), %x: tensor<2xf32> loc("x")) -> (tensor<f32>, tensor<2xi32>) {
    %u = tosa.mul %x, %v {ftpipe.stage = 0 : i64, shift = 0 : i8} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %p = tosa.cast %x {ftpipe.stage = 0 : i64} : (tensor<2xf32>) -> tensor<2xi32>
    %s = tosa.reduce_sum %u {axis = 0 : i32, ftpipe.stage = 0 : i64} : (tensor<2xf32>) -> tensor<1xf32>
    %l = tosa.reshape %s {ftpipe.stage = 0 : i64, new_shape = array<i64>} : (tensor<1xf32>) -> tensor<f32>
    return %l, %p : tensor<f32>, tensor<2xi32>
  }
}
