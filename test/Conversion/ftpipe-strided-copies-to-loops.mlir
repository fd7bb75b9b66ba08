// RUN: ftpipe-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(ftpipe-strided-copies-to-loops))' \
// RUN:   | FileCheck %s

// A copy into a slice of a larger buffer (the gradient of the loss's shift)
// becomes a generic that yields its input: loops, not memrefCopy.
// CHECK: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @into_slice
// CHECK-NOT: memref.copy
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%arg0 : memref<4x127x64xf32>) outs(%{{.*}} : memref<4x127x64xf32, strided<[8192, 64, 1]>>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
func.func @into_slice(%src: memref<4x127x64xf32>, %dst: memref<4x128x64xf32>) {
  %view = memref.subview %dst[0, 0, 0] [4, 127, 64] [1, 1, 1] : memref<4x128x64xf32> to memref<4x127x64xf32, strided<[8192, 64, 1]>>
  memref.copy %src, %view : memref<4x127x64xf32> to memref<4x127x64xf32, strided<[8192, 64, 1]>>
  return
}

// -----

// A copy out of a slice too.
// CHECK-LABEL: func.func @from_slice
// CHECK-NOT: memref.copy
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<4x127x64xf32, strided<[8192, 64, 1], offset: 64>>) outs(%arg1 : memref<4x127x64xf32>)
func.func @from_slice(%src: memref<4x128x64xf32>, %dst: memref<4x127x64xf32>) {
  %view = memref.subview %src[0, 1, 0] [4, 127, 64] [1, 1, 1] : memref<4x128x64xf32> to memref<4x127x64xf32, strided<[8192, 64, 1], offset: 64>>
  memref.copy %view, %dst : memref<4x127x64xf32, strided<[8192, 64, 1], offset: 64>> to memref<4x127x64xf32>
  return
}

// -----

// Contiguous copies stay: the memref lowering makes them one memcpy (a
// slice of whole rows is contiguous too).
// CHECK-LABEL: func.func @contiguous
// CHECK-NOT: linalg.generic
// CHECK: memref.copy %arg0, %arg1
// CHECK: memref.copy
// CHECK-NOT: linalg.generic
func.func @contiguous(%src: memref<4x128xf32>, %dst: memref<4x128xf32>, %big: memref<8x128xf32>) {
  memref.copy %src, %dst : memref<4x128xf32> to memref<4x128xf32>
  %rows = memref.subview %big[4, 0] [4, 128] [1, 1] : memref<8x128xf32> to memref<4x128xf32, strided<[128, 1], offset: 512>>
  memref.copy %src, %rows : memref<4x128xf32> to memref<4x128xf32, strided<[128, 1], offset: 512>>
  return
}
