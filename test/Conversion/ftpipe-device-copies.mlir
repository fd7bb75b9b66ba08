// RUN: ftpipe-opt %s --ftpipe-device-copies --split-input-file --verify-diagnostics | FileCheck %s

// Host-side copies (contiguous, strided, other element types) become calls of
// the runtime's device copies, declared once per element type; copies inside
// a gpu.module are not host code and stay.
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[S:.*]]: memref<2x2xf32, strided<[4, 2]>>, %[[C:.*]]: memref<2x2xf32>, %[[I:.*]]: memref<3xi64>, %[[J:.*]]: memref<3xi64>)
// CHECK: %[[A1:.*]] = memref.cast %[[A]] : memref<4xf32> to memref<*xf32>
// CHECK: %[[B1:.*]] = memref.cast %[[B]] : memref<4xf32> to memref<*xf32>
// CHECK: call @ftpipe_cuda_copy_f32(%[[A1]], %[[B1]]) : (memref<*xf32>, memref<*xf32>) -> ()
// CHECK: %[[S1:.*]] = memref.cast %[[S]] : memref<2x2xf32, strided<[4, 2]>> to memref<*xf32>
// CHECK: call @ftpipe_cuda_copy_f32(%[[S1]], %{{.*}})
// CHECK: call @ftpipe_cuda_copy_i64(%{{.*}}, %{{.*}}) : (memref<*xi64>, memref<*xi64>) -> ()
// CHECK-NOT: memref.copy
// CHECK: gpu.module @kernels
// CHECK: memref.copy
// CHECK: func.func private @ftpipe_cuda_copy_f32(memref<*xf32>, memref<*xf32>)
// CHECK-NEXT: func.func private @ftpipe_cuda_copy_i64(memref<*xi64>, memref<*xi64>)
module attributes {gpu.container_module} {
  func.func @copies(%a: memref<4xf32>, %b: memref<4xf32>,
                    %s: memref<2x2xf32, strided<[4, 2]>>, %c: memref<2x2xf32>,
                    %i: memref<3xi64>, %j: memref<3xi64>) {
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    memref.copy %s, %c : memref<2x2xf32, strided<[4, 2]>> to memref<2x2xf32>
    memref.copy %i, %j : memref<3xi64> to memref<3xi64>
    return
  }
  gpu.module @kernels {
    func.func @device(%a: memref<4xf32>, %b: memref<4xf32>) {
      memref.copy %a, %b : memref<4xf32> to memref<4xf32>
      return
    }
  }
}

// -----

// An element type with no device copy is refused where the copy is.
func.func @complex(%a: memref<2xcomplex<f32>>, %b: memref<2xcomplex<f32>>) {
  // expected-error @below {{copy of 'complex<f32>' elements: no device copy for this element type}}
  memref.copy %a, %b : memref<2xcomplex<f32>> to memref<2xcomplex<f32>>
  return
}
