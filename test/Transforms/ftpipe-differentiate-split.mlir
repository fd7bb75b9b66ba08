// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/two-stages.mlir --ftpipe-outline-stages --ftpipe-differentiate | FileCheck %s
// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/two-stages.mlir --ftpipe-outline-stages --ftpipe-differentiate --ftpipe-split-devices | FileCheck %s --check-prefix=ENTRY
// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/two-stages.mlir --ftpipe-outline-stages --ftpipe-differentiate=split-backward=false --ftpipe-split-devices | FileCheck %s --check-prefix=OFF

// Tests the split backward (contract version 2): each stage's adjoint is cut
// into an input part (the gradients of the received values, on the critical
// path) and a weight part (the parameter gradients), each op of the adjoint
// in one of them. Stage 0 receives nothing that needs a gradient: its input
// part only passes the incoming gradient on, and the weight part does the
// matmul x^T dy. Stage 1's input part computes tanh (which both need) and
// d(loss)/dt; the weight part gets tanh(t) and the gradient of the product
// from it and only multiplies and sums; constants are rebuilt, not passed.

// CHECK-LABEL: func.func private @stage0_adjoint(
// CHECK-LABEL: func.func private @stage0_adjoint_input(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<1x2x2xf32>)
// CHECK-SAME: -> (tensor<1x2x2xf32> {ftpipe.weight_saved = 0 : i64})
// CHECK-NEXT: return %[[DY]]
// CHECK-LABEL: func.func private @stage0_adjoint_weight(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<2x2xf32>, %[[X:[a-z0-9]+]]: tensor<1x2x2xf32>, %{{.*}}: tensor<1x2xi32>, %[[C:[a-z0-9]+]]: tensor<1x2x2xf32> {ftpipe.weight_saved = 0 : i64})
// CHECK-SAME: -> (tensor<2x2xf32> {ftpipe.grad_of = 0 : i64})
// CHECK: %[[XT:.*]] = tosa.transpose %[[X]]
// CHECK: tosa.matmul %[[XT]], %[[C]]
// CHECK-LABEL: func.func private @stage1_adjoint(
// CHECK-LABEL: func.func private @stage1_adjoint_input(
// CHECK-SAME: -> (tensor<1x2x2xf32> {ftpipe.grad_of = 1 : i64}, tensor<1x2x2xf32> {ftpipe.weight_saved = 0 : i64}, tensor<1x2x2xf32> {ftpipe.weight_saved = 1 : i64})
// CHECK: %[[TANH:.*]] = tosa.tanh
// CHECK-NOT: tosa.reduce_sum
// CHECK: return %{{.*}}, %{{.*}}, %[[TANH]]
// CHECK-LABEL: func.func private @stage1_adjoint_weight(
// CHECK-SAME: %{{.*}}: tensor<1x1x2xf32>, %[[G:[a-z0-9]+]]: tensor<1x2x2xf32> {ftpipe.weight_saved = 0 : i64}, %[[T:[a-z0-9]+]]: tensor<1x2x2xf32> {ftpipe.weight_saved = 1 : i64})
// CHECK-SAME: -> (tensor<1x1x2xf32> {ftpipe.grad_of = 0 : i64})
// CHECK-NEXT: %[[P:.*]] = tosa.mul %[[G]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = tosa.reduce_sum %[[P]] {axis = 1 : i32}
// CHECK-NEXT: return %[[S]]

// The entry points: the input part receives and sends as the whole backward
// does and returns the values for the weight part; the weight part takes the
// parameters and data inputs, then those values, and transfers nothing.
// ENTRY-LABEL: func.func @stage0_backward(
// ENTRY-LABEL: func.func @stage0_backward_input(
// ENTRY-SAME: -> (tensor<1x2x2xf32> {ftpipe.weight_saved = 0 : i64})
// ENTRY-SAME: ftpipe.entry = "backward_input"
// ENTRY: %[[G:.*]] = ftpipe.recv from 1 tag 1 microbatch
// ENTRY: %[[R:.*]] = call @stage0_adjoint_input(%{{.*}}, %{{.*}}, %{{.*}}, %[[G]])
// ENTRY: return %[[R]]
// ENTRY-LABEL: func.func @stage0_backward_weight(
// ENTRY-SAME: %{{.*}}: index {ftpipe.microbatch}, %{{.*}}: tensor<2x2xf32> {ftpipe.name = "w", ftpipe.owner = 0 : i64, ftpipe.param}, %{{.*}}: tensor<1x2x2xf32> {ftpipe.input = "x"}, %{{.*}}: tensor<1x2xi32> {ftpipe.input = "ids"}, %{{.*}}: tensor<1x2x2xf32> {ftpipe.weight_saved = 0 : i64})
// ENTRY-SAME: -> (tensor<2x2xf32> {ftpipe.grad = "w"})
// ENTRY-SAME: ftpipe.entry = "backward_weight"
// ENTRY-NOT: ftpipe.recv
// ENTRY-NOT: ftpipe.send
// ENTRY: call @stage0_adjoint_weight
// ENTRY-LABEL: func.func @stage1_backward_input(
// ENTRY-SAME: %{{.*}}: tensor<1x2x2xf32> {ftpipe.saved = 0 : i64}, %{{.*}}: tensor<1x2x1xf32> {ftpipe.saved = 1 : i64})
// ENTRY-SAME: -> (tensor<1x2x2xf32> {ftpipe.weight_saved = 0 : i64}, tensor<1x2x2xf32> {ftpipe.weight_saved = 1 : i64})
// ENTRY: %[[R1:.*]]:3 = call @stage1_adjoint_input
// ENTRY: ftpipe.send %[[R1]]#0 to 0 tag 1
// ENTRY: return %[[R1]]#1, %[[R1]]#2
// ENTRY-LABEL: func.func @stage1_backward_weight(
// ENTRY-SAME: -> (tensor<1x1x2xf32> {ftpipe.grad = "v"})
// ENTRY-NOT: ftpipe.send

// OFF-NOT: _adjoint_input
// OFF-NOT: _backward_input
// OFF-NOT: _backward_weight
