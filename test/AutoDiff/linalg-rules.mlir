// RUN: ftpipe-opt %s --split-input-file --ftpipe-differentiate | FileCheck %s

// One case per structured linalg op that lib/AutoDiff/LinalgRules.cpp
// attaches its one rule to. Each function applies the op once to arguments
// marked as parameters and returns its result, so ftpipe-differentiate builds
// `@<name>_adjoint(args..., dy)` (recomputing the forward) and the checks
// follow the rule on it: per input, a linalg.generic over the op's loops
// whose loops absent from the input's map reduce, with a copy of the body and
// its tangent.
// Each case's `// Rule:` line names its op. The list is complete:
// unittests/AutoDiff/RuleListTest.cpp reads the `// Rule:` lines of every
// file in this folder and checks that they name each op that has a rule
// registered (found through the op interfaces, not from a written list)
// exactly once; unittests/AutoDiff/RuleGradientTest.cpp checks the same rules
// numerically.

// Tests linalg.generic: w is read along rows only, so its gradient reduces
// over the columns; the body holds a copy of the product and its tangent.
// Rule: linalg.generic

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @generic_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x3xf32>, %[[W:arg[0-9]+]]: tensor<2xf32>, %[[DY:arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[W]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[A:[a-z_0-9]+]]: f32, %[[B:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[A]], %[[B]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[B]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DW:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[W]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<2xf32>)
// CHECK-NEXT: ^bb0(%[[A:[a-z_0-9]+]]: f32, %[[B:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[A]], %[[B]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[A]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DX]], %[[DW]]
#map = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @generic(%x: tensor<2x3xf32> {ftpipe.param}, %w: tensor<2xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests linalg.matmul: dA reduces over n and dB over m (their bodies dy * B and
// dy * A), and the accumulator c, a parameter here, gets dy itself.
// Rule: linalg.matmul

// CHECK-LABEL: func.func @matmul_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x3xf32>, %[[B:arg[0-9]+]]: tensor<3x4xf32>, %{{.*}}: tensor<2x4xf32>, %[[DY:arg[0-9]+]]: tensor<2x4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DA]], %[[DB]], %[[DY]]
func.func @matmul(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<3x4xf32> {ftpipe.param}, %c: tensor<2x4xf32> {ftpipe.param}) -> tensor<2x4xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Tests linalg.batch_matmul: the gradient of each input is a linalg.generic over the
// same loops, reading both inputs and dy, whose loops absent from the input's
// map reduce; its body is dy times the tangent of the product (the other
// input).
// Rule: linalg.batch_matmul

// CHECK-LABEL: func.func @batch_matmul_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x2x3xf32>, %[[B:arg[0-9]+]]: tensor<2x3x4xf32>, %{{.*}}: tensor<2x2x4xf32>, %[[DY:arg[0-9]+]]: tensor<2x2x4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x2x3xf32>, tensor<2x3x4xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x2x3xf32>, tensor<2x3x4xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DA]], %[[DB]]
func.func @batch_matmul(%a: tensor<2x2x3xf32> {ftpipe.param}, %b: tensor<2x3x4xf32> {ftpipe.param}, %c: tensor<2x2x4xf32>) -> tensor<2x2x4xf32> {
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x2x3xf32>, tensor<2x3x4xf32>) outs(%c : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  return %y : tensor<2x2x4xf32>
}

// -----

// Tests linalg.matmul_transpose_a: the gradient of each input is a linalg.generic over the
// same loops, reading both inputs and dy, whose loops absent from the input's
// map reduce; its body is dy times the tangent of the product (the other
// input).
// Rule: linalg.matmul_transpose_a

// CHECK-LABEL: func.func @matmul_transpose_a_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<3x2xf32>, %[[B:arg[0-9]+]]: tensor<3x4xf32>, %{{.*}}: tensor<2x4xf32>, %[[DY:arg[0-9]+]]: tensor<2x4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<3x2xf32>, tensor<3x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<3x2xf32>, tensor<3x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DA]], %[[DB]]
func.func @matmul_transpose_a(%a: tensor<3x2xf32> {ftpipe.param}, %b: tensor<3x4xf32> {ftpipe.param}, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = linalg.matmul_transpose_a ins(%a, %b : tensor<3x2xf32>, tensor<3x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Tests linalg.matmul_transpose_b: the gradient of each input is a linalg.generic over the
// same loops, reading both inputs and dy, whose loops absent from the input's
// map reduce; its body is dy times the tangent of the product (the other
// input).
// Rule: linalg.matmul_transpose_b

// CHECK-LABEL: func.func @matmul_transpose_b_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x3xf32>, %[[B:arg[0-9]+]]: tensor<4x3xf32>, %{{.*}}: tensor<2x4xf32>, %[[DY:arg[0-9]+]]: tensor<2x4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DA]], %[[DB]]
func.func @matmul_transpose_b(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<4x3xf32> {ftpipe.param}, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = linalg.matmul_transpose_b ins(%a, %b : tensor<2x3xf32>, tensor<4x3xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Tests linalg.batch_matmul_transpose_a: the gradient of each input is a linalg.generic over the
// same loops, reading both inputs and dy, whose loops absent from the input's
// map reduce; its body is dy times the tangent of the product (the other
// input).
// Rule: linalg.batch_matmul_transpose_a

// CHECK-LABEL: func.func @batch_matmul_transpose_a_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x3x2xf32>, %[[B:arg[0-9]+]]: tensor<2x3x4xf32>, %{{.*}}: tensor<2x2x4xf32>, %[[DY:arg[0-9]+]]: tensor<2x2x4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3x2xf32>, tensor<2x3x4xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x3x2xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3x2xf32>, tensor<2x3x4xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DA]], %[[DB]]
func.func @batch_matmul_transpose_a(%a: tensor<2x3x2xf32> {ftpipe.param}, %b: tensor<2x3x4xf32> {ftpipe.param}, %c: tensor<2x2x4xf32>) -> tensor<2x2x4xf32> {
  %y = linalg.batch_matmul_transpose_a ins(%a, %b : tensor<2x3x2xf32>, tensor<2x3x4xf32>) outs(%c : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  return %y : tensor<2x2x4xf32>
}

// -----

// Tests linalg.batch_matmul_transpose_b: the gradient of each input is a linalg.generic over the
// same loops, reading both inputs and dy, whose loops absent from the input's
// map reduce; its body is dy times the tangent of the product (the other
// input).
// Rule: linalg.batch_matmul_transpose_b

// CHECK-LABEL: func.func @batch_matmul_transpose_b_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x2x3xf32>, %[[B:arg[0-9]+]]: tensor<2x4x3xf32>, %{{.*}}: tensor<2x2x4xf32>, %[[DY:arg[0-9]+]]: tensor<2x2x4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x2x3xf32>, tensor<2x4x3xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x2x3xf32>, tensor<2x4x3xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x4x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DA]], %[[DB]]
func.func @batch_matmul_transpose_b(%a: tensor<2x2x3xf32> {ftpipe.param}, %b: tensor<2x4x3xf32> {ftpipe.param}, %c: tensor<2x2x4xf32>) -> tensor<2x2x4xf32> {
  %y = linalg.batch_matmul_transpose_b ins(%a, %b : tensor<2x2x3xf32>, tensor<2x4x3xf32>) outs(%c : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  return %y : tensor<2x2x4xf32>
}

// -----

// Tests linalg.matvec: the gradient of each input is a linalg.generic over the
// same loops, reading both inputs and dy, whose loops absent from the input's
// map reduce; its body is dy times the tangent of the product (the other
// input).
// Rule: linalg.matvec

// CHECK-LABEL: func.func @matvec_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x3xf32>, %[[B:arg[0-9]+]]: tensor<3xf32>, %{{.*}}: tensor<2xf32>, %[[DY:arg[0-9]+]]: tensor<2xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DA]], %[[DB]]
func.func @matvec(%a: tensor<2x3xf32> {ftpipe.param}, %x: tensor<3xf32> {ftpipe.param}, %c: tensor<2xf32>) -> tensor<2xf32> {
  %y = linalg.matvec ins(%a, %x : tensor<2x3xf32>, tensor<3xf32>) outs(%c : tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Tests linalg.vecmat: the gradient of each input is a linalg.generic over the
// same loops, reading both inputs and dy, whose loops absent from the input's
// map reduce; its body is dy times the tangent of the product (the other
// input).
// Rule: linalg.vecmat

// CHECK-LABEL: func.func @vecmat_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2xf32>, %[[B:arg[0-9]+]]: tensor<2x3xf32>, %{{.*}}: tensor<3xf32>, %[[DY:arg[0-9]+]]: tensor<3xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2xf32>, tensor<2x3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<2xf32>, tensor<2x3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @vecmat(%x: tensor<2xf32> {ftpipe.param}, %a: tensor<2x3xf32> {ftpipe.param}, %c: tensor<3xf32>) -> tensor<3xf32> {
  %y = linalg.vecmat ins(%x, %a : tensor<2xf32>, tensor<2x3xf32>) outs(%c : tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Tests linalg.dot: each input's gradient is dy (a scalar, broadcast over the
// one loop) times the other input, with no reduction left.
// Rule: linalg.dot

// CHECK-LABEL: func.func @dot_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<3xf32>, %[[B:arg[0-9]+]]: tensor<3xf32>, %{{.*}}: tensor<f32>, %[[DY:arg[0-9]+]]: tensor<f32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<3xf32>, tensor<3xf32>, tensor<f32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : tensor<3xf32>, tensor<3xf32>, tensor<f32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @dot(%a: tensor<3xf32> {ftpipe.param}, %b: tensor<3xf32> {ftpipe.param}, %c: tensor<f32>) -> tensor<f32> {
  %y = linalg.dot ins(%a, %b : tensor<3xf32>, tensor<3xf32>) outs(%c : tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// Tests linalg.transpose: dy read through the transposed map, no reduction.
// Rule: linalg.transpose

// CHECK-LABEL: func.func @transpose_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x3xf32>, %[[DY:arg[0-9]+]]: tensor<3x2xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[DY]] : tensor<2x3xf32>, tensor<3x2xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DX]]
func.func @transpose(%x: tensor<2x3xf32> {ftpipe.param}) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %y = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %y : tensor<3x2xf32>
}

// -----

// Tests linalg.broadcast: dy summed over the broadcast dimension.
// Rule: linalg.broadcast

// CHECK-LABEL: func.func @broadcast_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<3xf32>, %[[DY:arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction", "parallel"]} ins(%[[X]], %[[DY]] : tensor<3xf32>, tensor<2x3xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[DX]]
func.func @broadcast(%x: tensor<3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.broadcast ins(%x : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  return %y : tensor<2x3xf32>
}

// -----

// Tests linalg.reduce (a sum): dy broadcast back over the reduced dimension;
// the initial value, not a parameter, gets nothing.
// Rule: linalg.reduce

// CHECK-LABEL: func.func @reduce_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x3xf32>, %{{.*}}: tensor<2xf32>, %[[DY:arg[0-9]+]]: tensor<2xf32>)
// CHECK-SAME: -> (tensor<2x3xf32> {ftpipe.grad_of = 0 : i64})
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[DY]] : tensor<2x3xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DX]]
func.func @reduce(%x: tensor<2x3xf32> {ftpipe.param}, %init: tensor<2xf32>) -> tensor<2xf32> {
  %y = linalg.reduce ins(%x : tensor<2x3xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %y : tensor<2xf32>
}

// -----

// Tests linalg.map, whose body has no argument for its output (the rule
// once read past the block's arguments): each input's gradient is dy times
// the other input.
// Rule: linalg.map

// CHECK-LABEL: func.func @map_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @map(%a: tensor<4xf32> {ftpipe.param}, %b: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.map ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>)
    (%x: f32, %z: f32) {
      %m = arith.mulf %x, %z : f32
      linalg.yield %m : f32
    }
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.copy: dx = dy.
// Rule: linalg.copy

// CHECK-LABEL: func.func @copy_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[X]], %[[DY]] : tensor<4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[G:[a-z_0-9]+]]: f32, %[[ACC:[a-z_0-9]+]]: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DX]]
func.func @copy(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.add: both inputs get dy.
// Rule: linalg.add

// CHECK-LABEL: func.func @add_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @add(%a: tensor<4xf32> {ftpipe.param}, %b: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.sub: a gets dy, b gets -dy.
// Rule: linalg.sub

// CHECK-LABEL: func.func @sub_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[ONE]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[NEG]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @sub(%a: tensor<4xf32> {ftpipe.param}, %b: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.sub ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.mul: each input gets dy times the other.
// Rule: linalg.mul

// CHECK-LABEL: func.func @mul_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[X]], %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @mul(%a: tensor<4xf32> {ftpipe.param}, %b: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.div: da = dy / b, db = -dy * (a / b) / b.
// Rule: linalg.div

// CHECK-LABEL: func.func @div_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.divf %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.mulf %[[ONE]], %[[R]]
// CHECK-NEXT: %[[TD:.*]] = arith.divf %[[TQ]], %[[Y]]
// CHECK-NEXT: %[[T:.*]] = arith.negf %[[TD]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @div(%a: tensor<4xf32> {ftpipe.param}, %b: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.div ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.exp: dx = dy * exp(x).
// Rule: linalg.exp

// CHECK-LABEL: func.func @exp_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[X]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.exp %[[A]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[ONE]], %[[R]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DX]]
func.func @exp(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.log: dx = dy / x.
// Rule: linalg.log

// CHECK-LABEL: func.func @log_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[X]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.log %[[A]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.divf %[[ONE]], %[[A]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DX]]
func.func @log(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.log ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.negf: dx = -dy.
// Rule: linalg.negf

// CHECK-LABEL: func.func @negf_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[X]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.negf %[[A]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.negf %[[ONE]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DX]]
func.func @negf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.max: dy goes to a where a >= b, else to b.
// Rule: linalg.max

// CHECK-LABEL: func.func @max_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf oge, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf oge, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @max(%a: tensor<4xf32> {ftpipe.param}, %b: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.max ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests linalg.min: dy goes to a where a <= b, else to b.
// Rule: linalg.min

// CHECK-LABEL: func.func @min_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<4xf32>, %[[B:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ole, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel"]} ins(%[[A]], %[[B]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z_0-9]+]]: f32, %[[Y:[a-z_0-9]+]]: f32, %[[G:[a-z_0-9]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[X]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ole, %[[X]], %[[Y]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[C]], %[[ZERO]], %[[ONE]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[T]]
// CHECK-NEXT: linalg.yield %[[P]]
// CHECK: return %[[DA]], %[[DB]]
func.func @min(%a: tensor<4xf32> {ftpipe.param}, %b: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.min ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
