// RUN: ftpipe-opt %s --ftpipe-lower-cuda --mlir-print-ir-after=ftpipe-device-copies -o /dev/null 2>&1 | FileCheck %s
// REQUIRES: cuda

// Tests the CUDA lowering of a gather adjoint (an embedding's gradient with
// a padding row, as ftpipe-differentiate writes it): one kernel over the
// row's channels whose threads loop over the tokens in order (duplicate
// indices accumulate one after the other), not a host loop launching a
// kernel per token; the host neither loops nor reads the indices.

// CHECK-LABEL: func.func @embedding_grad
// CHECK-NOT: scf.for
// CHECK-NOT: ftpipe_cuda_synchronize
// CHECK: gpu.launch_func @ftpipe_kernels::@embedding_grad_kernel
// CHECK: gpu.launch_func @ftpipe_kernels::@embedding_grad_kernel_0
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: gpu.func @embedding_grad_kernel_0
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[T]]] : memref<1x16xi32>
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: memref.store
func.func @embedding_grad(%indices: tensor<1x16xi32>, %dy: tensor<1x16x8xf32>) -> tensor<1x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %grad = scf.for %t = %c0 to %c16 step %c1 iter_args(%acc = %fill) -> (tensor<1x4x8xf32>) {
    %i = tensor.extract %indices[%c0, %t] : tensor<1x16xi32>
    %k = arith.index_cast %i : i32 to index
    %is = arith.cmpi eq, %i, %pad : i32
    %next = scf.if %is -> (tensor<1x4x8xf32>) {
      scf.yield %acc : tensor<1x4x8xf32>
    } else {
      %row = tensor.extract_slice %dy[0, %t, 0] [1, 1, 8] [1, 1, 1] : tensor<1x16x8xf32> to tensor<1x1x8xf32>
      %cur = tensor.extract_slice %acc[0, %k, 0] [1, 1, 8] [1, 1, 1] : tensor<1x4x8xf32> to tensor<1x1x8xf32>
      %sum = tosa.add %cur, %row : (tensor<1x1x8xf32>, tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
      %new = tensor.insert_slice %sum into %acc[0, %k, 0] [1, 1, 8] [1, 1, 1] : tensor<1x1x8xf32> into tensor<1x4x8xf32>
      scf.yield %new : tensor<1x4x8xf32>
    }
    scf.yield %next : tensor<1x4x8xf32>
  }
  return %grad : tensor<1x4x8xf32>
}
