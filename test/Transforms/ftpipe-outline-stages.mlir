// RUN: ftpipe-opt %S/Inputs/two-stages.mlir --ftpipe-outline-stages | FileCheck %s
// RUN: ftpipe-opt %s --ftpipe-outline-stages | FileCheck %s --check-prefix=SHARED

// Tests that each stage becomes a private function with parameters (owner),
// data inputs and received values as arguments, that activity marks the
// float boundary that carries a gradient and not the mask computed from
// integers, and that the model function calls the stages in order.

// CHECK-LABEL: func.func private @stage0
// CHECK-SAME: {ftpipe.active, ftpipe.name = "w", ftpipe.owner = 0 : i64, ftpipe.param}
// CHECK-SAME: {ftpipe.input = "x"}
// CHECK-SAME: {ftpipe.input = "ids"}
// CHECK-SAME: -> (tensor<1x2x2xf32> {ftpipe.active}, tensor<1x2x1xf32>)
// CHECK-SAME: attributes {ftpipe.device = 0 : i64, ftpipe.stage = 0 : i64}
// CHECK: tosa.matmul
// CHECK-NOT: tosa.tanh
// CHECK: return
// CHECK-LABEL: func.func private @stage1
// CHECK-SAME: {ftpipe.active, ftpipe.name = "v", ftpipe.owner = 1 : i64, ftpipe.param}
// CHECK-SAME: %[[T:.*]]: tensor<1x2x2xf32> {ftpipe.active, ftpipe.from_stage = 0 : i64}
// CHECK-SAME: %[[M:.*]]: tensor<1x2x1xf32> {ftpipe.from_stage = 0 : i64}
// CHECK-SAME: -> (tensor<f32> {ftpipe.active, ftpipe.loss})
// CHECK-SAME: ftpipe.device = 1 : i64
// CHECK: tosa.tanh %[[T]]
// CHECK-LABEL: func.func @model
// CHECK-SAME: ftpipe.stage_order = array<i64: 0, 1>
// CHECK: %[[S0:.*]]:2 = call @stage0
// CHECK: %[[S1:.*]] = call @stage1(%{{.*}}, %[[S0]]#0, %[[S0]]#1)
// CHECK: return %[[S1]]

// Tests that a parameter read on two devices (a tied embedding) is owned by
// the lower device and a copy on the other, and that a constant read by both
// stages is copied into each instead of crossing the boundary.

module attributes {ftpipe.plan = #ftpipe.plan<method = "mixed-pipe", stage_device = [1, 0], objective_ms = 1.0, memory_bytes = [10, 10], seconds = 0.0>} {
  func.func @tied(%e: tensor<1x4x4xf32> {ftpipe.name = "shared.weight", ftpipe.param}, %x: tensor<1x4x4xf32>) -> tensor<f32> {
    %c = "tosa.const"() <{value = dense<2.0> : tensor<1x1x1xf32>}> {ftpipe.stage = 0 : i64} : () -> tensor<1x1x1xf32>
    %a = tosa.matmul %x, %e {ftpipe.stage = 0 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %b = tosa.mul %a, %c {ftpipe.stage = 0 : i64, shift = 0 : i8} : (tensor<1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x4x4xf32>
    %d = tosa.matmul %b, %e {ftpipe.stage = 1 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %f = tosa.mul %d, %c {ftpipe.stage = 1 : i64, shift = 0 : i8} : (tensor<1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x4x4xf32>
    %s = tosa.reduce_sum %f {axis = 1 : i32, ftpipe.stage = 1 : i64} : (tensor<1x4x4xf32>) -> tensor<1x1x4xf32>
    %s2 = tosa.reduce_sum %s {axis = 2 : i32, ftpipe.stage = 1 : i64} : (tensor<1x1x4xf32>) -> tensor<1x1x1xf32>
    %l = tosa.reshape %s2 {ftpipe.stage = 1 : i64, new_shape = array<i64>} : (tensor<1x1x1xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// SHARED-LABEL: func.func private @stage0
// SHARED-SAME: ftpipe.name = "shared.weight", ftpipe.owner = 0 : i64
// SHARED-SAME: ftpipe.device = 1 : i64
// SHARED: "tosa.const"() <{value = dense<2.000000e+00>
// SHARED-LABEL: func.func private @stage1
// SHARED-SAME: ftpipe.name = "shared.weight", ftpipe.owner = 0 : i64
// SHARED-SAME: -> (tensor<f32> {ftpipe.active, ftpipe.loss})
// SHARED-SAME: ftpipe.device = 0 : i64
// SHARED: "tosa.const"() <{value = dense<2.000000e+00>
