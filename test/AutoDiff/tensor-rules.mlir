// RUN: ftpipe-opt %s --split-input-file --ftpipe-differentiate | FileCheck %s

// One case per reverse-mode rule of lib/AutoDiff/TensorRules.cpp. Each
// function applies the op once to arguments marked as parameters and returns
// its result, so ftpipe-differentiate builds `@<name>_adjoint(args..., dy)`
// (recomputing the forward) and the checks follow the rule's formula on it.
// Each case's `// Rule:` line names its op. The list is complete:
// unittests/AutoDiff/RuleListTest.cpp reads the `// Rule:` lines of every
// file in this folder and checks that they name each op that has a rule
// registered (found through the op interfaces, not from a written list)
// exactly once; unittests/AutoDiff/RuleGradientTest.cpp checks the same rules
// numerically.

// Tests tensor.extract_slice: dy inserted into zeros at the slice's place.
// Rule: tensor.extract_slice

// CHECK-LABEL: func.func @extract_slice_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x3xf32>) ->
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK-NEXT: %[[DX:.*]] = tensor.insert_slice %[[DY]] into %[[Z]][1, 2] [2, 3] [1, 1]
// CHECK-NEXT: return %[[DX]]
func.func @extract_slice(%x: tensor<4x5xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tensor.extract_slice %x[1, 2] [2, 3] [1, 1] : tensor<4x5xf32> to tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tensor.insert_slice: the source gets its slice of dy, the destination
// gets dy with zeros where it was overwritten.
// Rule: tensor.insert_slice

// CHECK-LABEL: func.func @insert_slice_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<4x5xf32>) ->
// CHECK-NEXT: %[[DS:.*]] = tensor.extract_slice %[[DY]][1, 2] [2, 3] [1, 1] : tensor<4x5xf32> to tensor<2x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: %[[DD:.*]] = tensor.insert_slice %[[Z]] into %[[DY]][1, 2] [2, 3] [1, 1]
// CHECK-NEXT: return %[[DS]], %[[DD]]
func.func @insert_slice(%s: tensor<2x3xf32> {ftpipe.param}, %d: tensor<4x5xf32> {ftpipe.param}) -> tensor<4x5xf32> {
  %y = tensor.insert_slice %s into %d[1, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

// Tests tensor.expand_shape: dy reshaped back.
// Rule: tensor.expand_shape

// CHECK-LABEL: func.func @expand_shape_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x3xf32>) ->
// CHECK-NEXT: %[[DX:.*]] = tosa.reshape %[[DY]] {new_shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: return %[[DX]]
func.func @expand_shape(%x: tensor<6xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tensor.expand_shape %x [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tensor.collapse_shape: dy reshaped back.
// Rule: tensor.collapse_shape

// CHECK-LABEL: func.func @collapse_shape_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<6xf32>) ->
// CHECK-NEXT: %[[DX:.*]] = tosa.reshape %[[DY]] {new_shape = array<i64: 2, 3>} : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[DX]]
func.func @collapse_shape(%x: tensor<2x3xf32> {ftpipe.param}) -> tensor<6xf32> {
  %y = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  return %y : tensor<6xf32>
}

// -----

// Tests tensor.cast: dy cast back to the source's type.
// Rule: tensor.cast

// CHECK-LABEL: func.func @cast_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<?xf32>) ->
// CHECK-NEXT: %[[DX:.*]] = tensor.cast %[[DY]] : tensor<?xf32> to tensor<4xf32>
// CHECK-NEXT: return %[[DX]]
func.func @cast(%x: tensor<4xf32> {ftpipe.param}) -> tensor<?xf32> {
  %y = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// Tests tensor.pad: the slice of dy where the source landed (low padding as
// offsets).
// Rule: tensor.pad

// CHECK-LABEL: func.func @pad_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<5x4xf32>) ->
// CHECK-NEXT: %[[DX:.*]] = tensor.extract_slice %[[DY]][1, 0] [2, 3] [1, 1] : tensor<5x4xf32> to tensor<2x3xf32>
// CHECK-NEXT: return %[[DX]]
func.func @pad(%x: tensor<2x3xf32> {ftpipe.param}) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %y = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<2x3xf32> to tensor<5x4xf32>
  return %y : tensor<5x4xf32>
}

// -----

// Tests tensor.concat: each operand gets its slice of dy along the dimension.
// Rule: tensor.concat

// CHECK-LABEL: func.func @concat_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x8xf32>) ->
// CHECK-NEXT: %[[DA:.*]] = tosa.slice %[[DY]] {size = array<i64: 2, 3>, start = array<i64: 0, 0>}
// CHECK-NEXT: %[[DB:.*]] = tosa.slice %[[DY]] {size = array<i64: 2, 5>, start = array<i64: 0, 3>}
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @concat(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<2x5xf32> {ftpipe.param}) -> tensor<2x8xf32> {
  %y = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Tests tensor.extract: the scalar dy inserted into zeros at the index read.
// Rule: tensor.extract

// CHECK-LABEL: func.func @extract_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: f32) ->
// CHECK-DAG: %[[I:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[J:.*]] = arith.constant 2 : index
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: %[[DX:.*]] = tensor.insert %[[DY]] into %[[Z]][%[[I]], %[[J]]]
// CHECK-NEXT: return %[[DX]]
func.func @extract(%x: tensor<2x3xf32> {ftpipe.param}) -> f32 {
  %i = arith.constant 1 : index
  %j = arith.constant 2 : index
  %y = tensor.extract %x[%i, %j] : tensor<2x3xf32>
  return %y : f32
}
