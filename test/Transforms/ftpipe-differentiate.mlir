// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/two-stages.mlir --ftpipe-outline-stages --ftpipe-differentiate | FileCheck %s
// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/two-stages.mlir --ftpipe-outline-stages --ftpipe-differentiate=recompute=false | FileCheck %s --check-prefix=SAVE
// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/linalg-model.mlir --ftpipe-differentiate | FileCheck %s --check-prefix=LINALG

// Tests that each stage gets an adjoint taking the stage's arguments and the
// gradients of its active results, and returning the gradients of its active
// arguments; the matmul's adjoint multiplies by the transposed operands, the
// parameter broadcast by tosa.mul is summed back, and the mask gets nothing.

// CHECK-LABEL: func.func private @stage0_adjoint
// CHECK-SAME: (%{{.*}}: tensor<2x2xf32>, %{{.*}}: tensor<1x2x2xf32>, %{{.*}}: tensor<1x2xi32>, %[[DY:.*]]: tensor<1x2x2xf32>)
// CHECK-SAME: -> (tensor<2x2xf32> {ftpipe.grad_of = 0 : i64})
// CHECK: %[[XT:.*]] = tosa.transpose %{{.*}}, %{{.*}} : (tensor<1x2x2xf32>, tensor<3xi32>) -> tensor<1x2x2xf32>
// CHECK: %[[DW:.*]] = tosa.matmul %[[XT]], %[[DY]]
// CHECK: %[[R:.*]] = tosa.reshape %[[DW]] {new_shape = array<i64: 2, 2>}
// CHECK: return %[[R]]
// CHECK-LABEL: func.func private @stage1_adjoint
// CHECK-SAME: -> (tensor<1x1x2xf32> {ftpipe.grad_of = 0 : i64}, tensor<1x2x2xf32> {ftpipe.grad_of = 1 : i64})
// The recomputed forward, then the gradient of v (1x1x2, broadcast over the
// 1x2x2 product) summed over the broadcast dimension, then tanh's adjoint
// dy * (1 - y * y).
// CHECK: %[[Y:.*]] = tosa.tanh
// CHECK: tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<1x2x2xf32>) -> tensor<1x1x2xf32>
// CHECK: %[[YY:.*]] = tosa.mul %[[Y]], %[[Y]]
// CHECK: tosa.sub %{{.*}}, %[[YY]]

// Tests that without recomputation the stage returns what its adjoint
// needs, and the adjoint takes it after the stage's arguments.

// SAVE-LABEL: func.func private @stage1(
// SAVE-SAME: -> (tensor<f32> {ftpipe.active, ftpipe.loss}, tensor<1x2x2xf32> {ftpipe.saved = 0 : i64}
// SAVE-SAME: ftpipe.num_saved = {{[1-9]}} : i64, ftpipe.recompute = false
// SAVE-LABEL: func.func private @stage1_adjoint
// SAVE-SAME: %{{.*}}: tensor<1x2x2xf32> {ftpipe.saved = 0 : i64}
// SAVE-NOT: tosa.tanh
// SAVE: return

// Tests the linalg rule: a contraction's input gradients are contractions
// whose loops absent from the input's map reduce, and the body's tangent
// comes from the arith/math rules (tanh' = 1 - tanh^2).

// LINALG-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// LINALG-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// LINALG-LABEL: func.func @gen_adjoint
// LINALG-SAME: -> (tensor<2x3xf32> {ftpipe.grad_of = 0 : i64}, tensor<3x4xf32> {ftpipe.grad_of = 1 : i64})
// LINALG: math.tanh
// LINALG: arith.subf
// LINALG: linalg.generic {indexing_maps = [#[[MK]], #[[KN]], #{{.*}}, #[[MK]]], iterator_types = ["parallel", "reduction", "parallel"]}
// LINALG: linalg.generic {indexing_maps = [#[[MK]], #[[KN]], #{{.*}}, #[[KN]]], iterator_types = ["reduction", "parallel", "parallel"]}
