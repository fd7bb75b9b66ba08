// RUN: ftpipe-opt %s --pass-pipeline='builtin.module(func.func(ftpipe-reductions-innermost))' --split-input-file | FileCheck %s

// A sum over the leading dimension (a bias gradient's sum over the batch):
// the linalg.reduce becomes a linalg.generic whose parallel dimensions come
// first, the input indexed accordingly, the combiner kept.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @leading
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : memref<4x8x16xf32>) outs(%{{.*}} : memref<8x16xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.reduce
func.func @leading(%a: memref<4x8x16xf32>, %b: memref<8x16xf32>) {
  linalg.reduce ins(%a : memref<4x8x16xf32>) outs(%b : memref<8x16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A generic with the reduction between two parallel dimensions moves it
// last; the relative order of the parallel dimensions stays.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @middle
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @middle(%a: memref<4x8x16xf32>, %b: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#in, #out],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a : memref<4x8x16xf32>) outs(%b : memref<4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Already in order (reductions last), a full reduction, and a plain
// elementwise op are left as they are.
// CHECK-LABEL: func.func @unchanged
// CHECK: linalg.reduce ins(%{{.*}} : memref<8x16xf32>) outs(%{{.*}} : memref<8xf32>) dimensions = [1]
// CHECK: linalg.reduce ins(%{{.*}} : memref<8xf32>) outs(%{{.*}} : memref<f32>) dimensions = [0]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]}
#id = affine_map<(d0) -> (d0)>
func.func @unchanged(%a: memref<8x16xf32>, %b: memref<8xf32>, %c: memref<f32>, %d: memref<8xf32>) {
  linalg.reduce ins(%a : memref<8x16xf32>) outs(%b : memref<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%b : memref<8xf32>) outs(%c : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : memref<8xf32>) outs(%d : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}
