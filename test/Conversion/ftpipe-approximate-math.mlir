// RUN: ftpipe-opt %s --ftpipe-approximate-math | FileCheck %s

// f32 exp, erf and tanh become arithmetic (no call left to block the loop
// vectoriser); f64 keeps the library function.
// CHECK-LABEL: func.func @gelu_softmax
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: return
func.func @gelu_softmax(%x: f32) -> (f32, f32, f32) {
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %t = math.tanh %x : f32
  return %e, %r, %t : f32, f32, f32
}

// CHECK-LABEL: func.func @double
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.erf %{{.*}} : f64
func.func @double(%x: f64) -> (f64, f64) {
  %e = math.exp %x : f64
  %r = math.erf %x : f64
  return %e, %r : f64, f64
}
