// RUN: ftpipe-opt %s --ftpipe-outline-stages | FileCheck %s

// Tests that ops marked `ftpipe.replicate` (a position bias made from a
// small table and the attention mask) are copied, in order and with what
// they read, into every stage that reads them instead of being sent: the
// reading stages take the table (a parameter, owned by the lowest device)
// and the mask (a data input) as arguments, receive no bias, and the copies
// lose `ftpipe.stage` and `ftpipe.replicate`.

// CHECK-LABEL: func.func private @stage0
// CHECK-SAME: %[[T0:[^:]*]]: tensor<1x4x4xf32> {ftpipe.active, ftpipe.name = "bias.weight", ftpipe.owner = 0 : i64, ftpipe.param}
// CHECK-SAME: %[[X0:[^:]*]]: tensor<1x4x4xf32> {ftpipe.input = "x"}
// CHECK-SAME: %[[M0:[^:]*]]: tensor<1x4x4xf32> {ftpipe.input = "mask"}
// CHECK-SAME: -> (tensor<1x4x4xf32> {ftpipe.active})
// CHECK: %[[C0:.*]] = "tosa.const"
// CHECK: %[[S0:.*]] = tosa.mul %[[T0]], %[[C0]]
// CHECK: %[[B0:.*]] = tosa.add %[[S0]], %[[M0]]
// CHECK: tosa.add %[[X0]], %[[B0]]
// CHECK-NOT: ftpipe.replicate
// CHECK: return
// CHECK-LABEL: func.func private @stage1
// CHECK-SAME: %[[T1:[^:]*]]: tensor<1x4x4xf32> {ftpipe.active, ftpipe.name = "bias.weight", ftpipe.owner = 0 : i64, ftpipe.param}
// CHECK-SAME: %[[M1:[^:]*]]: tensor<1x4x4xf32> {ftpipe.input = "mask"}
// CHECK-SAME: %[[H:[^:]*]]: tensor<1x4x4xf32> {ftpipe.active, ftpipe.from_stage = 0 : i64}
// CHECK-SAME: ftpipe.device = 1 : i64
// CHECK: %[[C1:.*]] = "tosa.const"
// CHECK: %[[S1:.*]] = tosa.mul %[[T1]], %[[C1]]
// CHECK: %[[B1:.*]] = tosa.add %[[S1]], %[[M1]]
// CHECK: tosa.add %[[H]], %[[B1]]
// CHECK-NOT: ftpipe.stage =
// CHECK: return
// CHECK-LABEL: func.func @model
// CHECK: %[[H0:.*]] = call @stage0(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: call @stage1(%{{.*}}, %{{.*}}, %[[H0]])
// CHECK-NOT: tosa.add
// CHECK: return

module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1], objective_ms = 1.0, memory_bytes = [10, 10], seconds = 0.0>} {
  func.func @model(%t: tensor<1x4x4xf32> {ftpipe.name = "bias.weight", ftpipe.param}, %x: tensor<1x4x4xf32> loc("x"), %mask: tensor<1x4x4xf32> loc("mask")) -> tensor<f32> {
    %c = "tosa.const"() <{value = dense<2.0> : tensor<1x1x1xf32>}> {ftpipe.stage = 0 : i64, ftpipe.replicate} : () -> tensor<1x1x1xf32>
    %s = tosa.mul %t, %c {ftpipe.stage = 0 : i64, ftpipe.replicate, shift = 0 : i8} : (tensor<1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x4x4xf32>
    %bias = tosa.add %s, %mask {ftpipe.stage = 0 : i64, ftpipe.replicate} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %h = tosa.add %x, %bias {ftpipe.stage = 0 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %g = tosa.add %h, %bias {ftpipe.stage = 1 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %r = tosa.reduce_sum %g {axis = 1 : i32, ftpipe.stage = 1 : i64} : (tensor<1x4x4xf32>) -> tensor<1x1x4xf32>
    %r2 = tosa.reduce_sum %r {axis = 2 : i32, ftpipe.stage = 1 : i64} : (tensor<1x1x4xf32>) -> tensor<1x1x1xf32>
    %l = tosa.reshape %r2 {ftpipe.stage = 1 : i64, new_shape = array<i64>} : (tensor<1x1x1xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
