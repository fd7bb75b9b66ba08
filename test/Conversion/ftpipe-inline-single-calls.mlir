// RUN: ftpipe-opt %s --ftpipe-inline-single-calls | FileCheck %s

// A stage function that only its entry point calls is inlined there and
// erased; its arguments become the call's operands, its results the
// returned values.
// CHECK-LABEL: func.func @stage0_forward
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[W]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[P]], %[[W]]
// CHECK-NEXT: return %[[S]], %[[P]]
// CHECK-NOT: @stage0(
func.func private @stage0(%x: tensor<4xf32>, %w: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %p = arith.mulf %x, %w : tensor<4xf32>
  %s = arith.addf %p, %w : tensor<4xf32>
  return %s, %p : tensor<4xf32>, tensor<4xf32>
}
func.func @stage0_forward(%x: tensor<4xf32>, %w: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %s, %p = call @stage0(%x, %w)
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %s, %p : tensor<4xf32>, tensor<4xf32>
}

// Called twice: stays, and so do its calls.
// CHECK: func.func private @twice
// CHECK: func.func @calls_twice
// CHECK: call @twice
// CHECK: call @twice
func.func private @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.negf %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @calls_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = call @twice(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// Public (an entry point another entry point calls), external, of several
// blocks, or calling itself: stays.
// CHECK: func.func @public_callee
// CHECK: call @public_callee
// CHECK: func.func private @external
// CHECK: call @external
// CHECK: func.func private @blocks
// CHECK: call @blocks
// CHECK: func.func private @recursive
// CHECK: call @recursive
func.func @public_callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @calls_public(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @public_callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @calls_external(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @external(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^next
^next:
  return %x : tensor<4xf32>
}
func.func @calls_blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @blocks(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @recursive(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @recursive(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
