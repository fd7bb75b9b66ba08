// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-record-entry-abi | FileCheck %s --check-prefix=IR
// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-record-entry-abi | %python %S/Inputs/print-entry-abi.py | FileCheck %s

// Each public function with a body gets its description, in order of the
// functions: a scalar micro-batch, tensors of any rank (rank 0 has no
// sizes), memrefs like tensors. Private functions and declarations get
// none.

// IR-DAG: memref.global "public" constant @ftpipe_abi_stage0_forward : memref<{{[0-9]+}}xi8> = dense<
// IR-DAG: memref.global "public" constant @ftpipe_abi_on_buffers : memref<{{[0-9]+}}xi8> = dense<
// IR-NOT: @ftpipe_abi_helper
// IR-NOT: @ftpipe_abi_external

// CHECK-LABEL: stage0_forward:
// CHECK-NEXT: ftpipe-abi 1
// CHECK-NEXT: argument scalar index
// CHECK-NEXT: argument tensor f32 4 16
// CHECK-NEXT: argument tensor i32 2 4 1
// CHECK-NEXT: result tensor f32
// CHECK-NEXT: result tensor i1 3
// CHECK-LABEL: on_buffers:
// CHECK-NEXT: ftpipe-abi 1
// CHECK-NEXT: argument tensor bf16 8
// CHECK-NEXT: argument scalar i64
// CHECK-NEXT: result tensor f64 2 2
// CHECK-NOT: helper
// CHECK-NOT: external

func.func @stage0_forward(%mb: index, %w: tensor<4x16xf32>, %ids: tensor<2x4x1xi32>)
    -> (tensor<f32>, tensor<3xi1>) {
  %r = func.call @helper(%w) : (tensor<4x16xf32>) -> tensor<f32>
  %b = arith.constant dense<true> : tensor<3xi1>
  return %r, %b : tensor<f32>, tensor<3xi1>
}

func.func private @helper(%w: tensor<4x16xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

func.func private @external(tensor<4xf32>) -> tensor<4xf32>

func.func @on_buffers(%a: memref<8xbf16>, %n: i64) -> memref<2x2xf64> {
  %r = memref.alloc() : memref<2x2xf64>
  return %r : memref<2x2xf64>
}

// -----

// Types the runtime cannot pass are errors at the function.

// expected-error @+1 {{argument 0 has type 'tensor<?x4xf32>': the runtime passes only tensors and memrefs of static shape}}
func.func @dynamic(%a: tensor<?x4xf32>) {
  return
}

// -----

// expected-error @+1 {{result 0 has type 'tensor<*xf32>': the runtime passes only tensors and memrefs of static shape}}
func.func @unranked(%a: tensor<4xf32>) -> tensor<*xf32> {
  %c = tensor.cast %a : tensor<4xf32> to tensor<*xf32>
  return %c : tensor<*xf32>
}

// -----

// expected-error @+1 {{argument 1 has type 'vector<4xf32>': the runtime passes only tensors and memrefs of static shape}}
func.func @vector(%a: tensor<4xf32>, %v: vector<4xf32>) {
  return
}

// -----

// expected-error @+1 {{argument 0 has type 'complex<f32>', which the runtime cannot pass}}
func.func @complex(%c: complex<f32>) {
  return
}

// -----

// A description's name taken already.

// expected-error @+1 {{symbol 'ftpipe_abi_f' exists already}}
module {
  memref.global "public" constant @ftpipe_abi_f : memref<i64> = dense<0>
  func.func @f() {
    return
  }
}
