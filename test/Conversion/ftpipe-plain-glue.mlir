// RUN: ftpipe-opt %s --ftpipe-plain-glue=min-ops=4 | FileCheck %s
// RUN: ftpipe-opt %s --ftpipe-plain-glue | FileCheck %s --check-prefix=DEFAULT

// Tests that a function without loops of at least min-ops operations (a
// C-interface wrapper, glue that branches without a cycle) is compiled
// without optimisation and not inlined into, and that smaller functions,
// functions with a loop, declarations and functions nested in another
// module keep their attributes.
// CHECK-LABEL: llvm.func @small(
// CHECK-NOT: optimize_none
// CHECK-LABEL: llvm.func @_mlir_ciface_small(
// CHECK-SAME: attributes {no_inline, optimize_none}
// CHECK-LABEL: llvm.func @branches(
// CHECK-SAME: attributes {no_inline, optimize_none}
// CHECK-LABEL: llvm.func @loop(
// CHECK-NOT: optimize_none
// CHECK-LABEL: llvm.func @declared(
// CHECK-NOT: optimize_none
// CHECK-LABEL: llvm.func @nested(
// CHECK-NOT: optimize_none
// CHECK: }

// The default min-ops leaves these small functions alone.
// DEFAULT-NOT: optimize_none

module {
  llvm.func @small(%arg0: i64) -> i64 {
    llvm.return %arg0 : i64
  }
  llvm.func @_mlir_ciface_small(%arg0: i64) -> i64 {
    %0 = llvm.call @small(%arg0) : (i64) -> i64
    %1 = llvm.call @small(%0) : (i64) -> i64
    %2 = llvm.call @small(%1) : (i64) -> i64
    llvm.return %2 : i64
  }
  // A diamond: two paths to one block, no cycle.
  llvm.func @branches(%arg0: i1, %arg1: i64) -> i64 {
    llvm.cond_br %arg0, ^left, ^right
  ^left:
    %0 = llvm.call @small(%arg1) : (i64) -> i64
    llvm.br ^join(%0 : i64)
  ^right:
    llvm.br ^join(%arg1 : i64)
  ^join(%1: i64):
    llvm.return %1 : i64
  }
  llvm.func @loop(%arg0: i64) -> i64 {
    %0 = llvm.mlir.constant(0 : i64) : i64
    %1 = llvm.mlir.constant(1 : i64) : i64
    llvm.br ^head(%0 : i64)
  ^head(%2: i64):
    %3 = llvm.icmp "slt" %2, %arg0 : i64
    llvm.cond_br %3, ^body, ^exit
  ^body:
    %4 = llvm.add %2, %1 : i64
    llvm.br ^head(%4 : i64)
  ^exit:
    llvm.return %2 : i64
  }
  llvm.func @declared(i64) -> i64
  module @kernels {
    llvm.func @nested(%arg0: i64) -> i64 {
      %0 = llvm.add %arg0, %arg0 : i64
      %1 = llvm.add %0, %0 : i64
      %2 = llvm.add %1, %1 : i64
      llvm.return %2 : i64
    }
  }
}
