// RUN: ftpipe-opt %s --ftpipe-drop-annotations | FileCheck %s

// CHECK: module {
// CHECK: func.func @f(%arg0: index {other.keep}, %arg1: tensor<4xf32>) -> (tensor<4xf32> {other.result}) attributes {other.attr} {
// CHECK-NEXT: %{{.*}} = tosa.negate %arg1 {other.op} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: ftpipe.
module {
  func.func @f(%mb: index {other.keep},
               %w: tensor<4xf32> {ftpipe.param, ftpipe.name = "w"})
      -> (tensor<4xf32> {other.result})
      attributes {ftpipe.stage = 0 : i64, ftpipe.device = 1 : i64, other.attr} {
    %r = tosa.negate %w {ftpipe.stage = 0 : i64, other.op} : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
