// RUN: ftpipe-opt %s --ftpipe-map-parallel-loops-to-gpu --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not ftpipe-opt %s --ftpipe-map-parallel-loops-to-gpu=block-size=2048 --split-input-file 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: block-size must be in [1, 1024], not 2048

// Three dimensions: the innermost is tiled by 256 (bounds checked inside),
// tiles on block x, the outer dimensions on block y and z; the tile loop on
// thread x.
// CHECK-LABEL: func.func @three
// CHECK: %[[STEP:.*]] = arith.muli %c1, %c256
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} step (%{{.*}}, %{{.*}}, %[[STEP]])
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: memref.store
// CHECK: {mapping = [#gpu.loop_dim_map<processor = sequential, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = sequential, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_z, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @three(%a: memref<2x3x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c3, %c1000) step (%c1, %c1, %c1) {
    memref.store %zero, %a[%i, %j, %k] : memref<2x3x1000xf32>
    scf.reduce
  }
  return
}

// -----

// A parallel loop nested in a reduction loop inside the outermost one runs
// sequentially in the kernel.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: {mapping = [#gpu.loop_dim_map<processor = sequential
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @nested(%a: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
        memref.store %zero, %a[%i, %j] : memref<8x8xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}
