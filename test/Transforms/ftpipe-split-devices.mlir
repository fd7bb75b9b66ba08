// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/two-stages.mlir --ftpipe-outline-stages --ftpipe-differentiate --ftpipe-split-devices | FileCheck %s
// RUN: ftpipe-opt --mlir-print-debuginfo=false %S/Inputs/two-stages.mlir --ftpipe-outline-stages --ftpipe-differentiate=recompute=false --ftpipe-split-devices | FileCheck %s --check-prefix=SAVE

// Tests the entry points of docs/StagePrograms.md: each stage's forward
// receives what it reads (tag 2e), calls the stage and sends what others read;
// its backward receives the gradients of its results (tag 2e+1), seeds the
// loss with 1, calls the adjoint, sends the gradients of what it received and
// returns its parameters' gradients. The mask (an integer-derived value)
// travels forward but no gradient comes back for it. The model function is
// gone; the stage order stays on the module.

// CHECK: module attributes {{{.*}}ftpipe.stage_order = array<i64: 0, 1>}
// CHECK-NOT: func.func @model
// CHECK-LABEL: func.func @stage0_forward
// CHECK-SAME: (%[[MB:.*]]: index {ftpipe.microbatch}, %{{.*}}: tensor<2x2xf32> {ftpipe.name = "w", ftpipe.owner = 0 : i64, ftpipe.param}
// CHECK-SAME: attributes {ftpipe.device = 0 : i64, ftpipe.entry = "forward", ftpipe.stage = 0 : i64}
// CHECK: %[[R:.*]]:2 = call @stage0(
// CHECK: ftpipe.send %[[R]]#0 to 1 tag 0 microbatch %[[MB]] : tensor<1x2x2xf32>
// CHECK: ftpipe.send %[[R]]#1 to 1 tag 2 microbatch %[[MB]] : tensor<1x2x1xf32>
// CHECK-LABEL: func.func @stage0_backward
// CHECK-SAME: -> (tensor<2x2xf32> {ftpipe.grad = "w"})
// CHECK: %[[G:.*]] = ftpipe.recv from 1 tag 1 microbatch
// CHECK: call @stage0_adjoint(%{{.*}}, %{{.*}}, %{{.*}}, %[[G]])
// CHECK-NOT: tag 3
// CHECK-LABEL: func.func @stage1_forward
// CHECK-SAME: -> (tensor<f32> {ftpipe.loss}, tensor<1x2x2xf32> {ftpipe.saved = 0 : i64}, tensor<1x2x1xf32> {ftpipe.saved = 1 : i64})
// CHECK-SAME: ftpipe.device = 1 : i64, ftpipe.entry = "forward"
// CHECK: %[[T:.*]] = ftpipe.recv from 0 tag 0 microbatch
// CHECK: %[[M:.*]] = ftpipe.recv from 0 tag 2 microbatch
// CHECK: %[[L:.*]] = call @stage1(%{{.*}}, %[[T]], %[[M]])
// CHECK: return %[[L]], %[[T]], %[[M]]
// CHECK-LABEL: func.func @stage1_backward
// CHECK-SAME: {ftpipe.saved = 0 : i64}
// CHECK-SAME: -> (tensor<1x1x2xf32> {ftpipe.grad = "v"})
// CHECK: %[[SEED:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<f32>}>
// CHECK: %[[A:.*]]:2 = call @stage1_adjoint({{.*}}, %[[SEED]])
// CHECK: ftpipe.send %[[A]]#1 to 0 tag 1 microbatch
// CHECK: return %[[A]]#0

// Without recomputation the forward also returns the values the adjoint
// reads, and the backward passes them on.
// SAVE-LABEL: func.func @stage1_forward
// SAVE-SAME: {ftpipe.saved = 2 : i64}
// SAVE-LABEL: func.func @stage1_backward
// SAVE-SAME: {ftpipe.saved = 2 : i64}
