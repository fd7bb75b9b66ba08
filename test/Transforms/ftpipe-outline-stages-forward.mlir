// RUN: ftpipe-opt %s --ftpipe-outline-stages | FileCheck %s
// RUN: ftpipe-opt %s --ftpipe-outline-stages --ftpipe-differentiate --ftpipe-split-devices | FileCheck %s --check-prefix=SPLIT

// Tests that the results of an op the partitioner forwarded
// (`ftpipe.forward`) go from its stage to the first stage reading them and
// from there to the next: stage 1 passes %b on to stage 2 as an extra result
// (its own argument), and stage 2 receives it from stage 1.

// CHECK-LABEL: func.func private @stage0
// CHECK-LABEL: func.func private @stage1
// CHECK-SAME: %{{.*}}: tensor<1x4x4xf32> {ftpipe.active, ftpipe.from_stage = 0 : i64}, %[[B:.*]]: tensor<1x4x4xf32> {ftpipe.active, ftpipe.from_stage = 0 : i64}
// CHECK-SAME: -> (tensor<1x4x4xf32> {ftpipe.active}, tensor<1x4x4xf32> {ftpipe.active})
// CHECK-NOT: ftpipe.forward
// CHECK: return %{{.*}}, %[[B]]
// CHECK-LABEL: func.func private @stage2
// CHECK-SAME: {ftpipe.active, ftpipe.from_stage = 1 : i64}, %{{.*}}: tensor<1x4x4xf32> {ftpipe.active, ftpipe.from_stage = 1 : i64}
// CHECK-LABEL: func.func @model
// CHECK: %[[S0:.*]]:2 = call @stage0
// CHECK: %[[S1:.*]]:2 = call @stage1(%[[S0]]#1, %[[S0]]#0)
// CHECK: call @stage2(%[[S1]]#0, %[[S1]]#1)

// Stage 1 passes %b on before it computes, and adds the gradient stage 2
// sends back for it after its adjoint (to which it gives a zero gradient).

// SPLIT-LABEL: func.func @stage1_forward
// SPLIT: %[[B:.*]] = ftpipe.recv from 0 tag 0
// SPLIT-NEXT: ftpipe.send %[[B]] to 2 tag 6
// SPLIT-NEXT: %[[R:.*]]:2 = call @stage1(
// SPLIT-NEXT: ftpipe.send %[[R]]#0 to 2 tag 4
// SPLIT-LABEL: func.func @stage1_backward
// SPLIT: %[[G:.*]] = ftpipe.recv from 2 tag 5
// SPLIT-NEXT: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00>
// SPLIT-NEXT: %[[A:.*]]:2 = call @stage1_adjoint(%{{.*}}, %{{.*}}, %[[G]], %[[Z]])
// SPLIT-NEXT: %[[P:.*]] = ftpipe.recv from 2 tag 7
// SPLIT-NEXT: %[[S:.*]] = tosa.add %[[A]]#1, %[[P]]
// SPLIT-DAG: ftpipe.send %[[A]]#0 to 0 tag 3
// SPLIT-DAG: ftpipe.send %[[S]] to 0 tag 1
// SPLIT-LABEL: func.func @stage2_forward
// SPLIT-DAG: ftpipe.recv from 1 tag 4
// SPLIT-DAG: ftpipe.recv from 1 tag 6

module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0, 1, 2], objective_ms = 1.0, memory_bytes = [10, 10, 10], seconds = 0.0>} {
  func.func @model(%w: tensor<1x4x4xf32> {ftpipe.name = "w", ftpipe.param}, %x: tensor<1x4x4xf32>) -> tensor<f32> {
    %b = tosa.mul %x, %w {ftpipe.forward, ftpipe.stage = 0 : i64, shift = 0 : i8} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %h0 = tosa.tanh %b {ftpipe.stage = 0 : i64} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %h1 = tosa.add %h0, %b {ftpipe.stage = 1 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %h2 = tosa.mul %h1, %b {ftpipe.stage = 2 : i64, shift = 0 : i8} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %s = tosa.reduce_sum %h2 {axis = 1 : i32, ftpipe.stage = 2 : i64} : (tensor<1x4x4xf32>) -> tensor<1x1x4xf32>
    %s2 = tosa.reduce_sum %s {axis = 2 : i32, ftpipe.stage = 2 : i64} : (tensor<1x1x4xf32>) -> tensor<1x1x1xf32>
    %l = tosa.reshape %s2 {ftpipe.stage = 2 : i64, new_shape = array<i64>} : (tensor<1x1x1xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
