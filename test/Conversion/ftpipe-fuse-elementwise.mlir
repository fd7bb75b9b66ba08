// RUN: ftpipe-opt %s --ftpipe-fuse-elementwise --split-input-file | FileCheck %s

// Two element-wise ops (a named one, generalised) become one loop nest.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %s = linalg.add ins(%a, %b : tensor<8x16xf32>, tensor<8x16xf32>)
                  outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %p = linalg.mul ins(%s, %a : tensor<8x16xf32>, tensor<8x16xf32>)
                  outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %p : tensor<8x16xf32>
}

// -----

// A transpose feeding a contraction is fused into it (the contraction reads
// the weight transposed, no copy), and the matmul stays a mul-add body; a
// scaling producer is not fused into the contraction.
// CHECK-LABEL: func.func @into_contraction
// CHECK: %[[SCALED:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[SCALED]], %arg1 : tensor<8x4xf32>, tensor<16x4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.transpose
func.func @into_contraction(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>)
    -> tensor<8x16xf32> {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %scaled = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %half : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  %et = tensor.empty() : tensor<4x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x4xf32>) outs(%et : tensor<4x16xf32>)
                         permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<8x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scaled, %wt : tensor<8x4xf32>, tensor<4x16xf32>)
      outs(%init : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// The transpose between a reshape and a batch matmul of one batch (the TOSA
// front end's `x @ transpose(W)`): the unit dimension goes, the reshapes
// cancel, and the transpose fuses into the contraction as an operand layout.
// CHECK-LABEL: func.func @transpose_reshape_matmul
// CHECK-NOT: tensor.expand_shape %{{.*}} : tensor<4x16xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %arg1 : tensor<8x16xf32>, tensor<4x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @transpose_reshape_matmul(%x: tensor<1x8x16xf32>, %w: tensor<4x16xf32>) -> tensor<1x8x4xf32> {
  %e = tensor.empty() : tensor<16x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) permutation = [1, 0]
  %wt3 = tensor.expand_shape %wt [[0, 1], [2]] output_shape [1, 16, 4] : tensor<16x4xf32> into tensor<1x16x4xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%o : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %y = linalg.batch_matmul ins(%x, %wt3 : tensor<1x8x16xf32>, tensor<1x16x4xf32>) outs(%init : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// A contraction whose result is only transposed writes the transposed layout
// itself (a weight gradient: dW = transpose(x^T @ dy)).
// CHECK-DAG: #[[XT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @contraction_then_transpose
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[XT]], #[[DY]], #[[OUT]]]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<8x4xf32>) outs(%[[FILL]] : tensor<4x16xf32>)
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @contraction_then_transpose(%x: tensor<8x16xf32>, %dy: tensor<8x4xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                        affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<8x16xf32>, tensor<8x4xf32>) outs(%init : tensor<16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  %o = tensor.empty() : tensor<4x16xf32>
  %t = linalg.transpose ins(%g : tensor<16x4xf32>) outs(%o : tensor<4x16xf32>) permutation = [1, 0]
  return %t : tensor<4x16xf32>
}

// -----

// A contraction from a zero fill whose only use is an add, read transposed,
// accumulates into the add's other operand and writes the transposed layout
// (the tied embedding's gradient: transpose(x^T @ dy) + the scatter's): no
// fill, no separate add.
// CHECK-DAG: #[[XT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @contraction_then_transposed_add
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[G:.*]]: tensor<8x4xf32>, %[[D:.*]]: tensor<4x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[XT]], #[[DY]], #[[OUT]]]
// CHECK-SAME: ins(%[[X]], %[[G]] : tensor<8x16xf32>, tensor<8x4xf32>) outs(%[[D]] : tensor<4x16xf32>)
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @contraction_then_transposed_add(%x: tensor<8x16xf32>, %dy: tensor<8x4xf32>, %d: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                        affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<8x16xf32>, tensor<8x4xf32>) outs(%init : tensor<16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  %o = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (j, i)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%d, %g : tensor<4x16xf32>, tensor<16x4xf32>) outs(%o : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A fill of anything but zero would be added twice: no fold.
// CHECK-LABEL: func.func @contraction_from_nonzero_fill_then_add
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @contraction_from_nonzero_fill_then_add(%x: tensor<8x16xf32>, %dy: tensor<8x4xf32>, %d: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x4xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                        affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<8x16xf32>, tensor<8x4xf32>) outs(%init : tensor<16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  %o = tensor.empty() : tensor<16x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g, %d : tensor<16x4xf32>, tensor<16x4xf32>) outs(%o : tensor<16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}
