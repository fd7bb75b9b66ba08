// RUN: ftpipe-opt %s --allow-unregistered-dialect --ftpipe-outline-stages --ftpipe-differentiate | FileCheck %s

// Tests that ftpipe-differentiate takes an op of a dialect that is not
// loaded (it has no dialect) when the op needs no gradient, as here, where it
// only feeds a product with the parameter. It crashed with SIGSEGV (a
// finding of the one-hour fuzz run, docs/Robustness.md): the check for
// element-wise arith and math ops asked for the dialect of every op.

// CHECK-LABEL: func.func private @stage0(
// CHECK: "unknown.const"()
// CHECK-LABEL: func.func private @stage0_adjoint(
// CHECK: "unknown.const"()
// CHECK: tosa.mul
// CHECK: return {{.*}} : tensor<4xf32>

module attributes {ftpipe.plan = #ftpipe.plan<method = "seq-dp", stage_device = [0], objective_ms = 1.0, memory_bytes = [10]>} {
  func.func @model(%w: tensor<4xf32> {ftpipe.name = "w", ftpipe.param}) -> tensor<1xf32> {
    %c = "unknown.const"() {ftpipe.stage = 0 : i64} : () -> tensor<4xf32>
    %m = tosa.mul %w, %c {ftpipe.stage = 0 : i64, shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = tosa.reduce_sum %m {axis = 0 : i32, ftpipe.stage = 0 : i64} : (tensor<4xf32>) -> tensor<1xf32>
    return %s : tensor<1xf32>
  }
}
