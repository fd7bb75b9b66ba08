// RUN: ftpipe-opt %s --pass-pipeline='builtin.module(func.func(ftpipe-parallel-loops-outside))' --split-input-file | FileCheck %s

// Tests a gather adjoint's loop over tokens with the padding row's test:
// the scf.parallel over channels goes outside, the scf.for over tokens
// (index read, test, row update) inside it, in order per channel.
// CHECK-LABEL: func.func @gather_adjoint
// CHECK-SAME: (%[[DY:.*]]: memref<16x8xf32>, %[[IDX:.*]]: memref<16xi32>)
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[I:.*]] = memref.load %[[IDX]][%[[T]]]
// CHECK: scf.if
// CHECK: %[[DST:.*]] = memref.subview %[[ACC]]
// CHECK: %[[SRC:.*]] = memref.subview %[[DY]][%[[T]], 0]
// CHECK: memref.load %[[DST]][%[[C]]]
// CHECK: memref.load %[[SRC]][%[[C]]]
// CHECK: memref.store %{{.*}}, %[[DST]][%[[C]]]
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: return %[[ACC]]
func.func @gather_adjoint(%dy: memref<16x8xf32>, %idx: memref<16xi32>) -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0 : i32
  %acc = memref.alloc() : memref<4x8xf32>
  scf.for %t = %c0 to %c16 step %c1 {
    %i = memref.load %idx[%t] : memref<16xi32>
    %k = arith.index_cast %i : i32 to index
    %is = arith.cmpi eq, %i, %pad : i32
    scf.if %is {
    } else {
      %dst = memref.subview %acc[%k, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
      %src = memref.subview %dy[%t, 0] [1, 8] [1, 1] : memref<16x8xf32> to memref<8xf32, strided<[1], offset: ?>>
      scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
        %a = memref.load %dst[%c] : memref<8xf32, strided<[1], offset: ?>>
        %b = memref.load %src[%c] : memref<8xf32, strided<[1], offset: ?>>
        %s = arith.addf %a, %b : f32
        memref.store %s, %dst[%c] : memref<8xf32, strided<[1], offset: ?>>
        scf.reduce
      }
    }
  }
  return %acc : memref<4x8xf32>
}

// -----

// Tests a batch of gathers (values [N, K, C], a loop over the batch around
// the loop over tokens): the inner loop goes inside first, then the outer
// one; each channel still sees the batch, then the tokens, in order.
// CHECK-LABEL: func.func @batched
// CHECK: scf.parallel (%[[C:.*]]) =
// CHECK-NEXT: scf.for %[[N:.*]] =
// CHECK-NEXT: scf.for %[[T:.*]] =
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[N]], %{{.*}}, %[[C]]]
func.func @batched(%dy: memref<2x16x8xf32>, %idx: memref<2x16xi32>) -> memref<2x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %acc = memref.alloc() : memref<2x4x8xf32>
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %t = %c0 to %c16 step %c1 {
      %i = memref.load %idx[%n, %t] : memref<2x16xi32>
      %k = arith.index_cast %i : i32 to index
      scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
        %a = memref.load %acc[%n, %k, %c] : memref<2x4x8xf32>
        %b = memref.load %dy[%n, %t, %c] : memref<2x16x8xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %acc[%n, %k, %c] : memref<2x4x8xf32>
        scf.reduce
      }
    }
  }
  return %acc : memref<2x4x8xf32>
}

// -----

// Tests loops left alone: a parallel loop whose iterations may overlap
// (the channel is shifted by the token, so iteration c of token t and
// iteration c - 1 of token t + 1 touch the same element); a store into a
// function argument (which may alias what is read); a loop carrying a
// value; a host call in the body.
// CHECK-LABEL: func.func @refused
// CHECK: scf.for
// CHECK-NEXT: scf.parallel
// CHECK: scf.for
// CHECK-NEXT: scf.parallel
// CHECK: scf.for {{.*}} iter_args
// CHECK-NEXT: scf.parallel
// CHECK: scf.for
// CHECK-NEXT: func.call @f
// CHECK-NEXT: scf.parallel
func.func private @f()
func.func @refused(%dy: memref<16x8xf32>, %out: memref<4x8xf32>) -> (memref<4x24xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x24xf32>
  scf.for %t = %c0 to %c16 step %c1 {
    scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
      %j = arith.addi %c, %t : index
      %b = memref.load %dy[%t, %c] : memref<16x8xf32>
      memref.store %b, %acc[%c0, %j] : memref<4x24xf32>
      scf.reduce
    }
  }
  scf.for %t = %c0 to %c16 step %c1 {
    scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
      %b = memref.load %dy[%t, %c] : memref<16x8xf32>
      memref.store %b, %out[%c0, %c] : memref<4x8xf32>
      scf.reduce
    }
  }
  %sum = scf.for %t = %c0 to %c16 step %c1 iter_args(%s = %z) -> (f32) {
    scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
      %b = memref.load %dy[%t, %c] : memref<16x8xf32>
      memref.store %b, %acc[%c0, %c] : memref<4x24xf32>
      scf.reduce
    }
    %n = arith.addf %s, %z : f32
    scf.yield %n : f32
  }
  scf.for %t = %c0 to %c16 step %c1 {
    func.call @f() : () -> ()
    scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
      %b = memref.load %dy[%t, %c] : memref<16x8xf32>
      memref.store %b, %acc[%c0, %c] : memref<4x24xf32>
      scf.reduce
    }
  }
  return %acc, %sum : memref<4x24xf32>, f32
}
