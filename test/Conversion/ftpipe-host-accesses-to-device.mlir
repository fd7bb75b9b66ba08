// RUN: ftpipe-opt %s --ftpipe-host-accesses-to-device --split-input-file --verify-diagnostics | FileCheck %s

// What a 0-d fill and a full reduction leave in host code (a store and a
// serial loop) runs in one one-thread launch; the guard's read of the result
// becomes a copy into a host scalar, a synchronisation and a load of it.
// Launches already made and host-only ops (calls, allocations) stay.
// CHECK-LABEL: func.func @reduction
// CHECK-SAME: (%[[IN:.*]]: memref<8xi32>)
// CHECK: %[[SCALAR:.*]] = memref.alloca() : memref<i32>
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<1xi32>
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[ACC]]
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK-NEXT: memref.store %{{.*}}, %[[VIEW]][] : memref<i32>
// CHECK-NEXT: scf.for
// CHECK: memref.load %[[IN]]
// CHECK: arith.minsi
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: %[[ELEMENT:.*]] = memref.subview %[[ACC]][%{{.*}}] [1] [1] : memref<1xi32> to memref<i32, strided<[], offset: ?>>
// CHECK-NEXT: memref.copy %[[ELEMENT]], %[[SCALAR]]
// CHECK-NEXT: call @ftpipe_cuda_synchronize() : () -> ()
// CHECK-NEXT: %[[MIN:.*]] = memref.load %[[SCALAR]][] : memref<i32>
// CHECK: arith.cmpi slt, %[[MIN]]
// CHECK: scf.if
// CHECK-NEXT: call @report
// CHECK: func.func private @ftpipe_cuda_synchronize()
module attributes {gpu.container_module} {
  func.func private @report(i32)
  func.func @reduction(%in: memref<8xi32>) -> i1 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %max = arith.constant 2147483647 : i32
    %zero = arith.constant 0 : i32
    %acc = memref.alloc() : memref<1xi32>
    %view = memref.collapse_shape %acc [] : memref<1xi32> into memref<i32>
    memref.store %max, %view[] : memref<i32>
    scf.for %i = %c0 to %c8 step %c1 {
      %x = memref.load %in[%i] : memref<8xi32>
      %y = memref.load %view[] : memref<i32>
      %z = arith.minsi %x, %y : i32
      memref.store %z, %view[] : memref<i32>
    }
    %min = memref.load %acc[%c0] : memref<1xi32>
    %bad = arith.cmpi slt, %min, %zero : i32
    scf.if %bad {
      func.call @report(%min) : (i32) -> ()
    }
    memref.dealloc %acc : memref<1xi32>
    return %bad : i1
  }
}

// -----

// A loaded value that both device work and the host use: the load stays out
// of the launch (read on the host), the store that uses it goes in. %a is an
// argument that nothing writes: it is copied to the host once, at entry, and
// every read of it (also in the loop that calls functions, which stays on
// the host) loads that copy, with no synchronisation per iteration.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<f32>)
// CHECK-NEXT: %[[HOST:.*]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[HOST]]
// CHECK-NEXT: call @ftpipe_cuda_synchronize()
// CHECK: %[[V:.*]] = memref.load %[[HOST]][
// CHECK: gpu.launch
// CHECK-NEXT: memref.store %[[V]], %[[B]][]
// CHECK-NEXT: gpu.terminator
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[X:.*]] = memref.load %[[HOST]][%[[I]]]
// CHECK-NEXT: func.call @use(%[[X]])
// CHECK-NOT: ftpipe_cuda_synchronize
// CHECK: return
module attributes {gpu.container_module} {
  func.func private @use(f32)
  func.func @shared(%a: memref<4xf32>, %b: memref<f32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v = memref.load %a[%c0] : memref<4xf32>
    memref.store %v, %b[] : memref<f32>
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i] : memref<4xf32>
      func.call @use(%x) : (f32) -> ()
    }
    return %v : f32
  }
}

// -----

// An argument that a kernel writes is read where it is read, one element at
// a time: a copy taken at entry would miss the kernel's write.
// CHECK-LABEL: func.func @written
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %{{.*}}: f32)
// CHECK-NEXT: %[[SCALAR:.*]] = memref.alloca() : memref<f32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[A]][
// CHECK: gpu.terminator
// CHECK: %[[ELEMENT:.*]] = memref.subview %[[A]]
// CHECK-NEXT: memref.copy %[[ELEMENT]], %[[SCALAR]]
// CHECK-NEXT: call @ftpipe_cuda_synchronize()
// CHECK-NEXT: memref.load %[[SCALAR]][]
module attributes {gpu.container_module} {
  func.func @written(%a: memref<4xf32>, %f: f32) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
      memref.store %f, %a[%c0] : memref<4xf32>
      gpu.terminator
    }
    %r = memref.load %a[%c0] : memref<4xf32>
    return %r : f32
  }
}

// -----

// Host code that would still touch a buffer is refused: an atomic update.
module attributes {gpu.container_module} {
  func.func @atomic(%a: memref<4xf32>, %v: f32) {
    %c0 = arith.constant 0 : index
    // expected-error @below {{host code would access a device buffer here}}
    %old = memref.atomic_rmw addf %v, %a[%c0] : (f32, memref<4xf32>) -> f32
    return
  }
}
