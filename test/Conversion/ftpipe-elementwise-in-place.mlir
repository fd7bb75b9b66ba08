// RUN: ftpipe-opt %s --pass-pipeline='builtin.module(func.func(ftpipe-elementwise-in-place))' --split-input-file | FileCheck %s

// Tests a gather adjoint's per-token update (`acc[k, :] += dy[t, :]`): the
// sum writes the accumulator's row, which it also reads element for
// element; the temporary, its copy and its deallocation go. The row's view
// made after the sum (bufferization's second subview) moves before it.
// CHECK-LABEL: func.func @row_update
// CHECK-SAME: (%[[DY:.*]]: memref<16x8xf32>, %[[K:.*]]: index, %[[T:.*]]: index)
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[ROW:.*]] = memref.subview %[[DY]][%[[T]], 0]
// CHECK: %[[CUR:.*]] = memref.subview %[[ACC]][%[[K]], 0]
// CHECK: %[[DST:.*]] = memref.subview %[[ACC]][%[[K]], 0]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[CUR]], %[[ROW]] : {{.*}}) outs(%[[DST]] : {{.*}})
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: return %[[ACC]]
#id = affine_map<(d0) -> (d0)>
func.func @row_update(%dy: memref<16x8xf32>, %k: index, %t: index) -> memref<4x8xf32> {
  %acc = memref.alloc() : memref<4x8xf32>
  %row = memref.subview %dy[%t, 0] [1, 8] [1, 1] : memref<16x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %cur = memref.subview %acc[%k, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %tmp = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%cur, %row : memref<8xf32, strided<[1], offset: ?>>, memref<8xf32, strided<[1], offset: ?>>)
      outs(%tmp : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  %dst = memref.subview %acc[%k, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  memref.copy %tmp, %dst : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
  memref.dealloc %tmp : memref<8xf32>
  return %acc : memref<4x8xf32>
}

// -----

// Tests that an input which is a different view of the target's buffer
// (another row of the same allocation) keeps the temporary: writing in
// place could change what it reads.
// CHECK-LABEL: func.func @other_row
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<8xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[TMP]] : memref<8xf32>)
// CHECK: memref.copy %[[TMP]]
#id = affine_map<(d0) -> (d0)>
func.func @other_row(%k: index, %j: index) -> memref<4x8xf32> {
  %acc = memref.alloc() : memref<4x8xf32>
  %src = memref.subview %acc[%j, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %dst = memref.subview %acc[%k, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %tmp = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%src : memref<8xf32, strided<[1], offset: ?>>) outs(%tmp : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.copy %tmp, %dst : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
  memref.dealloc %tmp : memref<8xf32>
  return %acc : memref<4x8xf32>
}

// -----

// Tests that an op that is not element-wise (a transpose), an op followed
// by a store before the copy, and an op whose input and target are
// arguments (which may alias) keep their temporaries.
// CHECK-LABEL: func.func @not_elementwise
// CHECK: %[[T1:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[T1]] : memref<8x8xf32>)
// CHECK: memref.copy %[[T1]]
// CHECK: %[[T2:.*]] = memref.alloc() : memref<8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[T2]] : memref<8xf32>)
// CHECK: memref.store
// CHECK: memref.copy %[[T2]]
// CHECK: %[[T3:.*]] = memref.alloc() : memref<8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[T3]] : memref<8xf32>)
// CHECK: memref.copy %[[T3]], %{{.*}}
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0) -> (d0)>
func.func @not_elementwise(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8xf32>, %d: memref<8xf32>, %f: f32) {
  %t1 = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf32>) outs(%t1 : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  memref.copy %t1, %b : memref<8x8xf32> to memref<8x8xf32>
  memref.dealloc %t1 : memref<8x8xf32>
  %t2 = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : memref<8xf32>) outs(%t2 : memref<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  %c0 = arith.constant 0 : index
  memref.store %f, %d[%c0] : memref<8xf32>
  memref.copy %t2, %d : memref<8xf32> to memref<8xf32>
  memref.dealloc %t2 : memref<8xf32>
  %t3 = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : memref<8xf32>) outs(%t3 : memref<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  memref.copy %t3, %d : memref<8xf32> to memref<8xf32>
  memref.dealloc %t3 : memref<8xf32>
  return
}
