// RUN: ftpipe-opt %s --ftpipe-plain-c-wrappers | FileCheck %s

// Tests that a C-interface wrapper with a body is compiled without
// optimisation and not inlined into, and that other functions and
// declarations keep their attributes.
// CHECK-LABEL: llvm.func @f(
// CHECK-NOT: optimize_none
// CHECK-LABEL: llvm.func @_mlir_ciface_f(
// CHECK-SAME: attributes {no_inline, optimize_none}
// CHECK-LABEL: llvm.func @_mlir_ciface_g(
// CHECK-NOT: optimize_none
// CHECK: }


module {
  llvm.func @f(%arg0: i64) -> i64 {
    llvm.return %arg0 : i64
  }
  llvm.func @_mlir_ciface_f(%arg0: i64) -> i64 {
    %0 = llvm.call @f(%arg0) : (i64) -> i64
    llvm.return %0 : i64
  }
  llvm.func @_mlir_ciface_g(i64) -> i64
}
