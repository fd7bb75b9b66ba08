// RUN: ftpipe-opt %s --ftpipe-linalg-to-blas --split-input-file | FileCheck %s
// RUN: ftpipe-opt %s --ftpipe-linalg-to-blas=library=cublas --split-input-file | FileCheck %s --check-prefix=CUBLAS

// The CUDA target's entry takes the same arguments under another name.
// CUBLAS-LABEL: func.func @matmul_zero
// CUBLAS: call @ftpipe_cublas_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CUBLAS: func.func private @ftpipe_cublas_gemm_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64)
// CUBLAS: func.func private @ftpipe_cublas_gemm_f64(
// CUBLAS-NOT: ftpipe_blas_gemm

// A matmul after a zero fill overwrites its output (accumulate 0) and the
// fill goes. Role codes: rows at dimension 0 (1), columns at 1 (2 << 4): 33.
// CHECK-LABEL: func.func @matmul_zero
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C33:.*]] = arith.constant 33 : i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[A:.*]] = memref.cast %arg0 : memref<32x16xf32> to memref<*xf32>
// CHECK-DAG: %[[B:.*]] = memref.cast %arg1 : memref<16x64xf32> to memref<*xf32>
// CHECK-DAG: %[[C:.*]] = memref.cast %arg2 : memref<32x64xf32> to memref<*xf32>
// CHECK: call @ftpipe_blas_gemm_f32(%[[A]], %[[B]], %[[C]], %[[C33]], %[[C33]], %[[C33]], %[[C0]], %[[C0]])
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @ftpipe_blas_gemm_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64)
// CHECK: func.func private @ftpipe_blas_gemm_f64(
func.func @matmul_zero(%a: memref<32x16xf32>, %b: memref<16x64xf32>,
                       %c: memref<32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x64xf32>)
  linalg.matmul ins(%a, %b : memref<32x16xf32>, memref<16x64xf32>)
                outs(%c : memref<32x64xf32>)
  return
}

// -----

// Without a zero fill the product is added (accumulate 1); a fill of another
// value stays.
// CHECK-LABEL: func.func @matmul_accumulate
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-DAG: linalg.fill
// CHECK: call @ftpipe_blas_gemm_f64({{.*}}, %[[C1]])
func.func @matmul_accumulate(%a: memref<4x3xf64>, %b: memref<3x5xf64>,
                             %c: memref<4x5xf64>) {
  %one = arith.constant 1.0 : f64
  linalg.fill ins(%one : f64) outs(%c : memref<4x5xf64>)
  linalg.matmul ins(%a, %b : memref<4x3xf64>, memref<3x5xf64>)
                outs(%c : memref<4x5xf64>)
  return
}

// -----

// batch_matmul: batch at dimension 0 (1 << 8), rows at 1 (2), columns at 2
// (3 << 4): 256 + 2 + 48 = 306; one batch loop.
// CHECK-LABEL: func.func @batch_matmul
// CHECK-DAG: %[[C306:.*]] = arith.constant 306 : i64
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: call @ftpipe_blas_gemm_f32({{.*}}, %[[C306]], %[[C306]], %[[C306]], %[[C1]], %[[C1]])
func.func @batch_matmul(%a: memref<2x8x4xf32>, %b: memref<2x4x6xf32>,
                        %c: memref<2x8x6xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x4xf32>, memref<2x4x6xf32>)
                      outs(%c : memref<2x8x6xf32>)
  return
}

// -----

// A generic contraction with B transposed and its batch in the middle
// (B[n][b][k]: rows k at dimension 2 (3), columns n at 0 (1 << 4), batch at
// 1 (2 << 8): 531), loops in an unusual order (n, b, k, m).
// CHECK-LABEL: func.func @generic_transposed
// CHECK-DAG: %[[A:.*]] = arith.constant 306 : i64
// CHECK-DAG: %[[B:.*]] = arith.constant 531 : i64
// CHECK: call @ftpipe_blas_gemm_f32({{.*}}, %[[A]], %[[B]], %[[A]],
// CHECK-NOT: linalg.generic
#mapA = affine_map<(n, b, k, m) -> (b, m, k)>
#mapB = affine_map<(n, b, k, m) -> (n, b, k)>
#mapC = affine_map<(n, b, k, m) -> (b, m, n)>
func.func @generic_transposed(%a: memref<3x8x4xf32>, %b: memref<6x3x4xf32>,
                              %c: memref<3x8x6xf32>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "parallel"]}
      ins(%a, %b : memref<3x8x4xf32>, memref<6x3x4xf32>)
      outs(%c : memref<3x8x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not contractions for BLAS: a body that is not out += a * b, integer
// elements, two reduction loops, and tensors (before bufferization).
// CHECK-LABEL: func.func @not_blas
// CHECK-NOT: call @ftpipe_blas
// CHECK: linalg.generic
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: linalg.matmul
// CHECK: return
#m3 = affine_map<(m, n, k) -> (m, k)>
#n3 = affine_map<(m, n, k) -> (k, n)>
#o3 = affine_map<(m, n, k) -> (m, n)>
#a4 = affine_map<(m, n, k, l) -> (m, k, l)>
#b4 = affine_map<(m, n, k, l) -> (k, l, n)>
#o4 = affine_map<(m, n, k, l) -> (m, n)>
func.func @not_blas(%a: memref<4x3xf32>, %b: memref<3x5xf32>,
                    %c: memref<4x5xf32>, %ai: memref<4x3xi32>,
                    %bi: memref<3x5xi32>, %ci: memref<4x5xi32>,
                    %a4: memref<4x3x2xf32>, %b4: memref<3x2x5xf32>,
                    %ta: tensor<4x3xf32>, %tb: tensor<3x5xf32>,
                    %tc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  linalg.generic {indexing_maps = [#m3, #n3, #o3],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%ai, %bi : memref<4x3xi32>, memref<3x5xi32>)
                outs(%ci : memref<4x5xi32>)
  linalg.generic {indexing_maps = [#a4, #b4, #o4],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "reduction"]}
      ins(%a4, %b4 : memref<4x3x2xf32>, memref<3x2x5xf32>)
      outs(%c : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %r = linalg.matmul ins(%ta, %tb : tensor<4x3xf32>, tensor<3x5xf32>)
                     outs(%tc : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
