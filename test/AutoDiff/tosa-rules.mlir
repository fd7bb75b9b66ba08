// RUN: ftpipe-opt %s --split-input-file --ftpipe-differentiate | FileCheck %s

// One case per reverse-mode rule of lib/AutoDiff/TosaRules.cpp. Each
// function applies the op once to arguments marked as parameters and returns
// its result, so ftpipe-differentiate builds `@<name>_adjoint(args..., dy)`
// (recomputing the forward) and the checks follow the rule's formula on it.
// Each case's `// Rule:` line names its op. The list is complete:
// unittests/AutoDiff/RuleListTest.cpp reads the `// Rule:` lines of every
// file in this folder and checks that they name each op that has a rule
// registered (found through the op interfaces, not from a written list)
// exactly once; unittests/AutoDiff/RuleGradientTest.cpp checks the same rules
// numerically.

// Tests tosa.add: each operand gets dy, summed over the dimension in which it
// was broadcast.
// Rule: tosa.add

// CHECK-LABEL: func.func @add_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x3xf32>) ->
// CHECK-NEXT: %[[DB:.*]] = tosa.reduce_sum %[[DY]] {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: return %[[DY]], %[[DB]]
func.func @add(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<1x3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.sub: the first operand gets dy, the second -dy summed over its
// broadcast dimension.
// Rule: tosa.sub

// CHECK-LABEL: func.func @sub_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x3xf32>) ->
// CHECK-NEXT: %[[NEG:.*]] = tosa.negate %[[DY]]
// CHECK-NEXT: %[[DB:.*]] = tosa.reduce_sum %[[NEG]] {axis = 0 : i32}
// CHECK-NEXT: return %[[DY]], %[[DB]]
func.func @sub(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<1x3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.sub %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.mul: da = dy * b, db = sum over the broadcast dimension of dy * a.
// Rule: tosa.mul

// CHECK-LABEL: func.func @mul_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x3xf32>, %[[B:arg[0-9]+]]: tensor<1x3xf32>, %[[DY:arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[DA:.*]] = tosa.mul %[[DY]], %[[B]]
// CHECK-NEXT: %[[P:.*]] = tosa.mul %[[DY]], %[[A]]
// CHECK-NEXT: %[[DB:.*]] = tosa.reduce_sum %[[P]] {axis = 0 : i32}
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @mul(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<1x3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.mul %a, %b {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.negate: dx = -dy.
// Rule: tosa.negate

// CHECK-LABEL: func.func @negate_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<4xf32>) ->
// CHECK-NEXT: %[[DX:.*]] = tosa.negate %[[DY]]
// CHECK-NEXT: return %[[DX]]
func.func @negate(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.negate %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.identity: dx = dy.
// Rule: tosa.identity

// CHECK-LABEL: func.func @identity_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<4xf32>) ->
// CHECK-NEXT: return %[[DY]]
func.func @identity(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.identity %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.exp: dx = dy * y, from the recomputed forward.
// Rule: tosa.exp

// CHECK-LABEL: func.func @exp_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tosa.exp %[[X]]
// CHECK-NEXT: %[[DX:.*]] = tosa.mul %[[DY]], %[[Y]]
// CHECK-NEXT: return %[[DX]]
func.func @exp(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.log: dx = dy / x.
// Rule: tosa.log

// CHECK-LABEL: func.func @log_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[R:.*]] = tosa.reciprocal %[[X]]
// CHECK-NEXT: %[[DX:.*]] = tosa.mul %[[DY]], %[[R]]
// CHECK-NEXT: return %[[DX]]
func.func @log(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.log %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.tanh: dx = dy * (1 - y * y).
// Rule: tosa.tanh

// CHECK-LABEL: func.func @tanh_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tosa.tanh %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<1xf32>}>
// CHECK-NEXT: %[[YY:.*]] = tosa.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[D:.*]] = tosa.sub %[[ONE]], %[[YY]]
// CHECK-NEXT: %[[DX:.*]] = tosa.mul %[[DY]], %[[D]]
// CHECK-NEXT: return %[[DX]]
func.func @tanh(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.rsqrt: dx = dy * (-1/2) y^3.
// Rule: tosa.rsqrt

// CHECK-LABEL: func.func @rsqrt_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tosa.rsqrt %[[X]]
// CHECK-NEXT: %[[Y2:.*]] = tosa.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[Y3:.*]] = tosa.mul %[[Y2]], %[[Y]]
// CHECK-NEXT: %[[HALF:.*]] = "tosa.const"() <{value = dense<-5.000000e-01> : tensor<1xf32>}>
// CHECK-NEXT: %[[D:.*]] = tosa.mul %[[Y3]], %[[HALF]]
// CHECK-NEXT: %[[DX:.*]] = tosa.mul %[[DY]], %[[D]]
// CHECK-NEXT: return %[[DX]]
func.func @rsqrt(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.reciprocal: dx = -(dy * y^2).
// Rule: tosa.reciprocal

// CHECK-LABEL: func.func @reciprocal_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tosa.reciprocal %[[X]]
// CHECK-NEXT: %[[Y2:.*]] = tosa.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = tosa.mul %[[DY]], %[[Y2]]
// CHECK-NEXT: %[[DX:.*]] = tosa.negate %[[P]]
// CHECK-NEXT: return %[[DX]]
func.func @reciprocal(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.reciprocal %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.pow: dx = dy * e * x^(e-1); de = dy * y * log(x), summed over the
// broadcast dimension of e.
// Rule: tosa.pow

// CHECK-LABEL: func.func @pow_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x3xf32>, %[[E:arg[0-9]+]]: tensor<1x3xf32>, %[[DY:arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: %[[Y:.*]] = tosa.pow %[[X]], %[[E]]
// CHECK: %[[ONE:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK-NEXT: %[[EM1:.*]] = tosa.sub %[[E]], %[[ONE]]
// CHECK: %[[POW:.*]] = tosa.pow %[[X]], %[[EM1]]
// CHECK-NEXT: %[[EP:.*]] = tosa.mul %[[E]], %[[POW]]
// CHECK-NEXT: %[[DX:.*]] = tosa.mul %[[DY]], %[[EP]]
// CHECK-NEXT: %[[LOG:.*]] = tosa.log %[[X]]
// CHECK-NEXT: %[[YL:.*]] = tosa.mul %[[Y]], %[[LOG]]
// CHECK-NEXT: %[[P:.*]] = tosa.mul %[[DY]], %[[YL]]
// CHECK-NEXT: %[[DE:.*]] = tosa.reduce_sum %[[P]] {axis = 0 : i32}
// CHECK-NEXT: return %[[DX]], %[[DE]]
func.func @pow(%x: tensor<2x3xf32> {ftpipe.param}, %e: tensor<1x3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.pow %x, %e : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.erf: dx = dy * 2/sqrt(pi) * exp(-x^2).
// Rule: tosa.erf

// CHECK-LABEL: func.func @erf_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[X2:.*]] = tosa.mul %[[X]], %[[X]]
// CHECK-NEXT: %[[NX2:.*]] = tosa.negate %[[X2]]
// CHECK-NEXT: %[[G:.*]] = tosa.exp %[[NX2]]
// CHECK-NEXT: %[[S:.*]] = "tosa.const"() <{value = dense<1.12837923> : tensor<1xf32>}>
// CHECK-NEXT: %[[GS:.*]] = tosa.mul %[[G]], %[[S]]
// CHECK-NEXT: %[[DX:.*]] = tosa.mul %[[DY]], %[[GS]]
// CHECK-NEXT: return %[[DX]]
func.func @erf(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.erf %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.sigmoid: dx = dy * y * (1 - y).
// Rule: tosa.sigmoid

// CHECK-LABEL: func.func @sigmoid_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tosa.sigmoid %[[X]]
// CHECK-NEXT: %[[ONE:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<1xf32>}>
// CHECK-NEXT: %[[OMY:.*]] = tosa.sub %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[D:.*]] = tosa.mul %[[Y]], %[[OMY]]
// CHECK-NEXT: %[[DX:.*]] = tosa.mul %[[DY]], %[[D]]
// CHECK-NEXT: return %[[DX]]
func.func @sigmoid(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.maximum: dy goes to a where a >= b, else to b (summed over b's
// broadcast dimension).
// Rule: tosa.maximum

// CHECK-LABEL: func.func @maximum_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x3xf32>, %[[B:arg[0-9]+]]: tensor<1x3xf32>, %[[DY:arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: %[[M:.*]] = tosa.greater_equal %[[A]], %[[B]]
// CHECK-NEXT: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1x1xf32>}>
// CHECK-NEXT: %[[DA:.*]] = tosa.select %[[M]], %[[DY]], %[[Z]]
// CHECK-NEXT: %[[S:.*]] = tosa.select %[[M]], %[[Z]], %[[DY]]
// CHECK-NEXT: %[[DB:.*]] = tosa.reduce_sum %[[S]] {axis = 0 : i32}
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @maximum(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<1x3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.maximum %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.minimum: dy goes to a where b >= a, else to b.
// Rule: tosa.minimum

// CHECK-LABEL: func.func @minimum_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<2x3xf32>, %[[B:arg[0-9]+]]: tensor<1x3xf32>, %[[DY:arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: %[[M:.*]] = tosa.greater_equal %[[B]], %[[A]]
// CHECK-NEXT: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1x1xf32>}>
// CHECK-NEXT: %[[DA:.*]] = tosa.select %[[M]], %[[DY]], %[[Z]]
// CHECK-NEXT: %[[S:.*]] = tosa.select %[[M]], %[[Z]], %[[DY]]
// CHECK-NEXT: %[[DB:.*]] = tosa.reduce_sum %[[S]] {axis = 0 : i32}
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @minimum(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<1x3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.minimum %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.clamp: dy passes where min <= x <= max (PyTorch's convention).
// Rule: tosa.clamp

// CHECK-LABEL: func.func @clamp_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK-DAG: %[[LO:.*]] = "tosa.const"() <{value = dense<-1.000000e+00> : tensor<1xf32>}>
// CHECK-DAG: %[[HI:.*]] = "tosa.const"() <{value = dense<2.000000e+00> : tensor<1xf32>}>
// CHECK-DAG: %[[BELOW:.*]] = tosa.greater_equal %[[HI]], %[[X]]
// CHECK-DAG: %[[ABOVE:.*]] = tosa.greater_equal %[[X]], %[[LO]]
// CHECK: %[[IN:.*]] = tosa.logical_and %[[ABOVE]], %[[BELOW]]
// CHECK-NEXT: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1xf32>}>
// CHECK-NEXT: %[[DX:.*]] = tosa.select %[[IN]], %[[DY]], %[[Z]]
// CHECK-NEXT: return %[[DX]]
func.func @clamp(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.clamp %x {min_int = -1 : i64, max_int = 1 : i64, min_fp = -1.0 : f32, max_fp = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.abs: dx = dy where x >= 0, else -dy.
// Rule: tosa.abs

// CHECK-LABEL: func.func @abs_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32>, %[[DY:arg[0-9]+]]: tensor<4xf32>)
// CHECK: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1xf32>}>
// CHECK: %[[POS:.*]] = tosa.greater_equal %[[X]], %[[Z]]
// CHECK-NEXT: %[[NEG:.*]] = tosa.negate %[[DY]]
// CHECK-NEXT: %[[DX:.*]] = tosa.select %[[POS]], %[[DY]], %[[NEG]]
// CHECK-NEXT: return %[[DX]]
func.func @abs(%x: tensor<4xf32> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests tosa.select: dy goes to the operand chosen, the predicate gets
// nothing, the broadcast operand is summed back.
// Rule: tosa.select

// CHECK-LABEL: func.func @select_adjoint
// CHECK-SAME: (%[[P:arg[0-9]+]]: tensor<2x3xi1>, %{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<1x3xf32>, %[[DY:arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-SAME: -> (tensor<2x3xf32> {ftpipe.grad_of = 1 : i64}, tensor<1x3xf32> {ftpipe.grad_of = 2 : i64})
// CHECK-NEXT: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1x1xf32>}>
// CHECK-NEXT: %[[DA:.*]] = tosa.select %[[P]], %[[DY]], %[[Z]]
// CHECK-NEXT: %[[S:.*]] = tosa.select %[[P]], %[[Z]], %[[DY]]
// CHECK-NEXT: %[[DB:.*]] = tosa.reduce_sum %[[S]] {axis = 0 : i32}
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @select(%p: tensor<2x3xi1>, %a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<1x3xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.select %p, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.matmul: dA = dC B^T and dB = A^T dC, per batch.
// Rule: tosa.matmul

// CHECK-LABEL: func.func @matmul_adjoint
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<1x2x3xf32>, %[[B:arg[0-9]+]]: tensor<1x3x4xf32>, %[[DY:arg[0-9]+]]: tensor<1x2x4xf32>)
// CHECK-NEXT: %[[P1:.*]] = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}>
// CHECK-NEXT: %[[BT:.*]] = tosa.transpose %[[B]], %[[P1]] : (tensor<1x3x4xf32>, tensor<3xi32>) -> tensor<1x4x3xf32>
// CHECK-NEXT: %[[DA:.*]] = tosa.matmul %[[DY]], %[[BT]] : (tensor<1x2x4xf32>, tensor<1x4x3xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT: %[[P2:.*]] = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}>
// CHECK-NEXT: %[[AT:.*]] = tosa.transpose %[[A]], %[[P2]] : (tensor<1x2x3xf32>, tensor<3xi32>) -> tensor<1x3x2xf32>
// CHECK-NEXT: %[[DB:.*]] = tosa.matmul %[[AT]], %[[DY]] : (tensor<1x3x2xf32>, tensor<1x2x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @matmul(%a: tensor<1x2x3xf32> {ftpipe.param}, %b: tensor<1x3x4xf32> {ftpipe.param}) -> tensor<1x2x4xf32> {
  %y = tosa.matmul %a, %b : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// Tests tosa.reshape: dy reshaped back to the input's shape.
// Rule: tosa.reshape

// CHECK-LABEL: func.func @reshape_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<6xf32>) ->
// CHECK-NEXT: %[[DX:.*]] = tosa.reshape %[[DY]] {new_shape = array<i64: 2, 3>} : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[DX]]
func.func @reshape(%x: tensor<2x3xf32> {ftpipe.param}) -> tensor<6xf32> {
  %y = tosa.reshape %x {new_shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return %y : tensor<6xf32>
}

// -----

// Tests tosa.transpose: dy transposed by the inverse permutation.
// Rule: tosa.transpose

// CHECK-LABEL: func.func @transpose_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<3x4x2xf32>) ->
// CHECK-NEXT: %[[INV:.*]] = "tosa.const"() <{value = dense<[2, 0, 1]> : tensor<3xi32>}>
// CHECK-NEXT: %[[DX:.*]] = tosa.transpose %[[DY]], %[[INV]] : (tensor<3x4x2xf32>, tensor<3xi32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: return %[[DX]]
func.func @transpose(%x: tensor<2x3x4xf32> {ftpipe.param}) -> tensor<3x4x2xf32> {
  %perms = "tosa.const"() <{value = dense<[1, 2, 0]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %y = tosa.transpose %x, %perms : (tensor<2x3x4xf32>, tensor<3xi32>) -> tensor<3x4x2xf32>
  return %y : tensor<3x4x2xf32>
}

// -----

// Tests tosa.slice: dy inserted into zeros at the slice's place.
// Rule: tosa.slice

// CHECK-LABEL: func.func @slice_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x3xf32>) ->
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK-NEXT: %[[DX:.*]] = tensor.insert_slice %[[DY]] into %[[Z]][1, 2] [2, 3] [1, 1]
// CHECK-NEXT: return %[[DX]]
func.func @slice(%x: tensor<4x5xf32> {ftpipe.param}) -> tensor<2x3xf32> {
  %y = tosa.slice %x {start = array<i64: 1, 2>, size = array<i64: 2, 3>} : (tensor<4x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests tosa.concat: each operand gets its slice of dy along the axis.
// Rule: tosa.concat

// CHECK-LABEL: func.func @concat_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x8xf32>) ->
// CHECK-NEXT: %[[DA:.*]] = tosa.slice %[[DY]] {size = array<i64: 2, 3>, start = array<i64: 0, 0>}
// CHECK-NEXT: %[[DB:.*]] = tosa.slice %[[DY]] {size = array<i64: 2, 5>, start = array<i64: 0, 3>}
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @concat(%a: tensor<2x3xf32> {ftpipe.param}, %b: tensor<2x5xf32> {ftpipe.param}) -> tensor<2x8xf32> {
  %y = tosa.concat %a, %b {axis = 1 : i32} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Tests tosa.gather: each row of dy is added into the row its index read
// (a loop over the indices, so repeated indices add up); the indices get
// nothing.
// Rule: tosa.gather

// CHECK-LABEL: func.func @gather_adjoint
// CHECK-SAME: (%{{.*}}: tensor<1x5x3xf32>, %[[I:arg[0-9]+]]: tensor<1x4xi32>, %[[DY:arg[0-9]+]]: tensor<1x4x3xf32>)
// CHECK-SAME: -> (tensor<1x5x3xf32> {ftpipe.grad_of = 0 : i64})
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x5x3xf32>)
// CHECK: %[[DV:.*]] = scf.for %[[N:.*]] = {{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK: scf.for %[[W:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[IDX:.*]] = tensor.extract %[[I]][%[[N]], %[[W]]]
// CHECK: %[[K:.*]] = arith.index_cast %[[IDX]] : i32 to index
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[DY]][%[[N]], %[[W]], 0] [1, 1, 3]
// CHECK: %[[CUR:.*]] = tensor.extract_slice %[[ACC]][%[[N]], %[[K]], 0] [1, 1, 3]
// CHECK: %[[SUM:.*]] = tosa.add %[[CUR]], %[[ROW]]
// CHECK: tensor.insert_slice %[[SUM]] into %[[ACC]][%[[N]], %[[K]], 0] [1, 1, 3]
// CHECK: return %[[DV]]
func.func @gather(%v: tensor<1x5x3xf32> {ftpipe.param}, %i: tensor<1x4xi32>) -> tensor<1x4x3xf32> {
  %y = tosa.gather %v, %i : (tensor<1x5x3xf32>, tensor<1x4xi32>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

// Tests tosa.gather with `ftpipe.padding_row` (nn.Embedding's padding_idx):
// a row of dy whose index is the padding row leaves the gradient as it was
// (an scf.if around the row's update, which bufferizes in place).

// CHECK-LABEL: func.func @gather_padding_adjoint
// CHECK-SAME: (%{{.*}}: tensor<1x5x3xf32>, %[[I:arg[0-9]+]]: tensor<1x4xi32>, %[[DY:arg[0-9]+]]: tensor<1x4x3xf32>)
// CHECK: scf.for
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.*}})
// CHECK: %[[IDX:.*]] = tensor.extract %[[I]]
// CHECK: %[[PAD:.*]] = arith.constant 2 : i32
// CHECK: %[[IS:.*]] = arith.cmpi eq, %[[IDX]], %[[PAD]] : i32
// CHECK: %[[NEW:.*]] = scf.if %[[IS]] -> (tensor<1x5x3xf32>) {
// CHECK-NEXT: scf.yield %[[ACC]]
// CHECK-NEXT: } else {
// CHECK: %[[CUR:.*]] = tensor.extract_slice %[[ACC]]
// CHECK: %[[SUM:.*]] = tosa.add %[[CUR]], %{{.*}}
// CHECK: %[[UPD:.*]] = tensor.insert_slice %[[SUM]] into %[[ACC]]
// CHECK: scf.yield %[[UPD]]
// CHECK: scf.yield %[[NEW]]
func.func @gather_padding(%v: tensor<1x5x3xf32> {ftpipe.param}, %i: tensor<1x4xi32>) -> tensor<1x4x3xf32> {
  %y = tosa.gather %v, %i {ftpipe.padding_row = 2 : i64} : (tensor<1x5x3xf32>, tensor<1x4xi32>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

// Tests tosa.reduce_sum: dy broadcast back over the reduced axis.
// Rule: tosa.reduce_sum

// CHECK-LABEL: func.func @reduce_sum_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<2x1xf32>) ->
// CHECK-NEXT: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<2x3xf32>}>
// CHECK-NEXT: %[[DX:.*]] = tosa.add %[[Z]], %[[DY]] : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[DX]]
func.func @reduce_sum(%x: tensor<2x3xf32> {ftpipe.param}) -> tensor<2x1xf32> {
  %y = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// Tests tosa.reduce_max: dy goes to the elements equal to the maximum.
// Rule: tosa.reduce_max

// CHECK-LABEL: func.func @reduce_max_adjoint
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x3xf32>, %[[DY:arg[0-9]+]]: tensor<2x1xf32>)
// CHECK-NEXT: %[[Y:.*]] = tosa.reduce_max %[[X]] {axis = 1 : i32}
// CHECK-NEXT: %[[EQ:.*]] = tosa.equal %[[X]], %[[Y]] : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[Z:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1x1xf32>}>
// CHECK-NEXT: %[[DX:.*]] = tosa.select %[[EQ]], %[[DY]], %[[Z]] : (tensor<2x3xi1>, tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[DX]]
func.func @reduce_max(%x: tensor<2x3xf32> {ftpipe.param}) -> tensor<2x1xf32> {
  %y = tosa.reduce_max %x {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// Tests tosa.cast between floats: dy cast back to the input's type.
// Rule: tosa.cast

// CHECK-LABEL: func.func @cast_adjoint
// CHECK-SAME: %[[DY:arg[0-9]+]]: tensor<4xf32>) ->
// CHECK-NEXT: %[[DX:.*]] = tosa.cast %[[DY]] : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: return %[[DX]]
func.func @cast(%x: tensor<4xf16> {ftpipe.param}) -> tensor<4xf32> {
  %y = tosa.cast %x : (tensor<4xf16>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
