// RUN: ftpipe-opt %s --ftpipe-differentiate=recompute=false | FileCheck %s

// Without recomputation, the backward gets the forward values its adjoints
// read as saved arguments, except those rebuilt from its own arguments: a
// transposed and reshaped weight (the matmul's adjoint for `a` reads it) is
// transposed again in the backward instead of kept in memory as a copy; the
// tanh output, computed from more than one argument's rearrangement, is saved.
// CHECK-LABEL: func.func @model(
// CHECK-SAME: -> (tensor<f32>, tensor<1x4x2xf32> {ftpipe.saved = 0 : i64})
// CHECK-SAME: ftpipe.num_saved = 1 : i64
// CHECK: %[[Y:.*]] = tosa.matmul
// CHECK: %[[T:.*]] = tosa.tanh %[[Y]]
// CHECK: return %{{.*}}, %[[T]]
// CHECK-LABEL: func.func @model_adjoint(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x3xf32>, %[[W:[^:]*]]: tensor<2x3xf32>, %{{[^:]*}}: tensor<1x4x2xf32> {ftpipe.saved = 0 : i64}
// CHECK: %[[P:.*]] = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}>
// CHECK: %[[WT:.*]] = tosa.transpose %[[W]], %[[P]]
// CHECK: %[[WT3:.*]] = tosa.reshape %[[WT]] {new_shape = array<i64: 1, 3, 2>}
// CHECK: tosa.transpose %[[WT3]]
func.func @model(%a: tensor<1x4x3xf32> {ftpipe.name = "a", ftpipe.param}, %w: tensor<2x3xf32> {ftpipe.name = "w", ftpipe.param}) -> tensor<f32> {
  %perm = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %wt = tosa.transpose %w, %perm : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  %wt3 = tosa.reshape %wt {new_shape = array<i64: 1, 3, 2>} : (tensor<3x2xf32>) -> tensor<1x3x2xf32>
  %y = tosa.matmul %a, %wt3 : (tensor<1x4x3xf32>, tensor<1x3x2xf32>) -> tensor<1x4x2xf32>
  %t = tosa.tanh %y : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %s = tosa.reduce_sum %t {axis = 2 : i32} : (tensor<1x4x2xf32>) -> tensor<1x4x1xf32>
  %s2 = tosa.reduce_sum %s {axis = 1 : i32} : (tensor<1x4x1xf32>) -> tensor<1x1x1xf32>
  %l = tosa.reshape %s2 {new_shape = array<i64>} : (tensor<1x1x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
