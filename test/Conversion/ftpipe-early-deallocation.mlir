// RUN: ftpipe-opt %s --split-input-file --ftpipe-early-deallocation | FileCheck %s

// Tests that a buffer is freed right after its last use (through a view and
// a nested region), before the next allocation, instead of at the end.
// CHECK-LABEL: func.func @after_last_use
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[A]]
// CHECK: scf.for
// CHECK: memref.load %[[VIEW]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: memref.copy %[[B]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @after_last_use(%out: memref<8xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<4xf32>)
  %view = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    %v = memref.load %view[%i, %c0] : memref<2x2xf32>
    memref.store %v, %out[%i] : memref<8xf32>
  }
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%x : f32) outs(%b : memref<8xf32>)
  memref.copy %b, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// -----

// Tests that a pointer taken from a buffer keeps it alive as long as the
// pointer is used, and that a buffer the block returns is left alone.
// CHECK-LABEL: func.func @pointer_and_escape
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: arith.addi %[[P]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return %[[B]]
func.func @pointer_and_escape(%x: f32) -> (memref<4xf32>, index) {
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<4xf32>)
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %b = memref.alloc() : memref<4xf32>
  linalg.fill ins(%x : f32) outs(%b : memref<4xf32>)
  %q = arith.addi %p, %p : index
  memref.dealloc %a : memref<4xf32>
  return %b, %q : memref<4xf32>, index
}

// -----

// Tests that a call's result (freed through the base buffer of its strided
// metadata, as upstream's lower-deallocations leaves it) is freed after its last
// use, before the next call.
// CHECK-LABEL: func.func @call_result
// CHECK: %[[R:.*]] = call @make()
// CHECK-NEXT: memref.copy %[[R]]
// CHECK-NEXT: %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[R]]
// CHECK-NEXT: memref.dealloc %[[BASE]]
// CHECK-NEXT: %[[S:.*]] = call @make()
func.func private @make() -> memref<4xf32>
func.func @call_result(%out: memref<4xf32>) {
  %r = func.call @make() : () -> memref<4xf32>
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  %s = func.call @make() : () -> memref<4xf32>
  memref.copy %s, %out : memref<4xf32> to memref<4xf32>
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %r : memref<4xf32> -> memref<f32>, index, index, index
  memref.dealloc %base : memref<f32>
  memref.dealloc %s : memref<4xf32>
  return
}
