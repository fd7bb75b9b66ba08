// RUN: ftpipe-opt %s --ftpipe-copy-globals-to-heap | FileCheck %s

// A constant buffer is read from a heap copy: kernels of the CUDA target can
// reach the heap (managed memory), not the host's data segment.
memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func.func @f
// CHECK: %[[GLOBAL:.*]] = memref.get_global @cst : memref<4xf32>
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT: memref.copy %[[GLOBAL]], %[[COPY]]
// CHECK: linalg.generic {{.*}} ins(%[[COPY]] : memref<4xf32>)
// CHECK-NOT: %[[GLOBAL]]
func.func @f(%out: memref<4xf32>) {
  %g = memref.get_global @cst : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%g : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
