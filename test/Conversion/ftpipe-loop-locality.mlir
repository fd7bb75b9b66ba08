// RUN: ftpipe-opt %s --split-input-file --ftpipe-loop-locality | FileCheck %s

// A bias gradient (db[j] = sum_i dy[i, j]) written with the reduction
// innermost walks dy by whole rows; the rows loop goes outside, so that the
// inner loop reads dy and writes db contiguously.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @bias_gradient
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%{{.*}} : memref<64x128xf32>) outs(%{{.*}} : memref<128xf32>)
func.func @bias_gradient(%dy: memref<64x128xf32>, %db: memref<128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%dy : memref<64x128xf32>) outs(%db : memref<128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A row reduction (softmax's max) is contiguous already: unchanged.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_max
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
func.func @row_max(%x: tensor<64x128xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %max = arith.maximumf %in, %acc : f32
    linalg.yield %max : f32
  } -> tensor<64xf32>
  return %m : tensor<64xf32>
}

// -----

// A transpose on buffers cannot be contiguous on both sides: it is tiled
// 32 x 32 along the two crossing loops, so that both tiles stay in the cache.
// CHECK-LABEL: func.func @transpose
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C32]]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C32]]
// CHECK: memref.subview %{{.*}} : memref<128x256xf32> to memref<32x32xf32, strided<[256, 1], offset: ?>>
// CHECK: memref.subview %{{.*}} : memref<256x128xf32> to memref<32x32xf32, strided<[128, 1], offset: ?>>
// CHECK: linalg.generic
// CHECK-SAME: memref<32x32xf32, strided<[256, 1], offset: ?>>
// CHECK-NOT: linalg.generic
func.func @transpose(%x: memref<128x256xf32>, %y: memref<256x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<128x256xf32>) outs(%y : memref<256x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A small transpose fits the cache whole: not tiled.
// CHECK-LABEL: func.func @small_transpose
// CHECK-NOT: scf.for
// CHECK: linalg.generic
func.func @small_transpose(%x: memref<16x8xf32>, %y: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x8xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A dynamic stride: the cost is unknown, the op is left alone.
// CHECK-LABEL: func.func @dynamic_stride
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @dynamic_stride(%dy: memref<64x128xf32, strided<[?, 1]>>, %db: memref<128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%dy : memref<64x128xf32, strided<[?, 1]>>) outs(%db : memref<128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  }
  return
}
