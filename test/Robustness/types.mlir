// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --ftpipe-annotate-costs | FileCheck %s

// Tensors whose bytes FTPipe cannot count are refused at the value that has
// them; element types with a known size (complex, index) are counted. Ops
// outside the entry block would be left out of the plan: such functions are
// refused.

// expected-error @+1 {{argument 0 of '@overflow' has type 'tensor<4294967296x4294967296x16xf32>': the tensor is larger than 16 TiB}}
func.func @overflow(%x: tensor<4294967296x4294967296x16xf32>) -> tensor<4294967296x4294967296x16xf32> {
  return %x : tensor<4294967296x4294967296x16xf32>
}

// -----

// expected-error @+1 {{argument 0 of '@dynamic' has type 'tensor<?x4xf32>': a dynamic dimension ('?') has no size to count}}
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{argument 0 of '@unranked' has type 'tensor<*xf32>': an unranked tensor has no size to count}}
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// -----

func.func @unknown(%x: tensor<4xf32>) -> tensor<4x!foo.bar> {
  // expected-error @+1 {{result type 'tensor<4x!foo.bar>': element type '!foo.bar' has no known size}}
  %0 = "foo.op"(%x) : (tensor<4xf32>) -> tensor<4x!foo.bar>
  return %0 : tensor<4x!foo.bar>
}

// -----

// expected-error @+1 {{function '@blocks' has 2 blocks: FTPipe partitions single-block functions (control flow must be structured, e.g. scf.if)}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
  "cf.br"(%0)[^bb1] : (tensor<4xf32>) -> ()
^bb1(%1: tensor<4xf32>):
  %2 = tosa.abs %1 : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// complex<f32> is 8 bytes and index 8: 4 elements are 32 bytes each.
// CHECK-LABEL: func.func @counted
// CHECK: "foo.op"{{.*}}out_bytes = 32>
// CHECK: "foo.op"{{.*}}out_bytes = 32>
func.func @counted(%x: tensor<4xf32>) -> (tensor<4xcomplex<f32>>, tensor<4xindex>) {
  // expected-warning @+1 {{no cost rule}}
  %0 = "foo.op"(%x) : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
  // expected-warning @+1 {{no cost rule}}
  %1 = "foo.op"(%x) : (tensor<4xf32>) -> tensor<4xindex>
  return %0, %1 : tensor<4xcomplex<f32>>, tensor<4xindex>
}
