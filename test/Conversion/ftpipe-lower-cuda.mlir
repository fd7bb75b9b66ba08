// RUN: ftpipe-opt %s --split-input-file --ftpipe-lower-cuda | FileCheck %s
// RUN: ftpipe-opt %s --split-input-file --ftpipe-lower-cuda='chip=sm_80 blas=false' | FileCheck %s --check-prefix=NOBLAS
// REQUIRES: cuda

// The CUDA lowering of a matmul followed by two element-wise chains, one
// with a constant: the matmul calls cuBLAS, each chain is a kernel (tanh
// from libdevice), both compiled by one ptxas run into one fatbin, the
// constant is copied to the heap, and every buffer comes from the generic
// allocation functions (device memory in FTPipeCUDARuntime), never malloc.

// CHECK-NOT: @malloc
// CHECK-LABEL: llvm.func @f(
// CHECK: %[[T:[0-9]+]] = llvm.mlir.constant(256 : index) : i64
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @ftpipe_cublas_gemm_f32(
// 2 x 300 elements: 2 blocks of 256 threads along x, 2 along y.
// CHECK: gpu.launch_func @ftpipe_kernels::@f_kernel blocks in (%[[B:[0-9]+]], %[[B]], %[[O:[0-9]+]]) threads in (%[[T]], %[[O]], %[[O]])
// The constant's copy is dead after the first chain: freed there (early
// deallocation), ordered after that kernel on the stream.
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: gpu.launch_func @ftpipe_kernels::@f_kernel_0 blocks in (%[[B]], %[[B]], %[[O]]) threads in (%[[T]], %[[O]], %[[O]])
// CHECK-LABEL: llvm.func @_mlir_ciface_f(
// CHECK: gpu.binary @ftpipe_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, "{{.+}}">]
// The recorded peak: the bias copy (8 B), the matmul's and the first
// chain's 2 x 300 results (2,400 B each; the second chain writes over the
// matmul's), each with the 64 B alignment and rounded as the allocator does:
// 128 + 2 x 2,496 B.
// CHECK: llvm.mlir.global external constant @ftpipe_peak_bytes_f(5120 : i64)
// CHECK-NOT: gpu.binary
// CHECK-NOT: gpu.module

// Without BLAS the matmul is a kernel too.
// NOBLAS-NOT: ftpipe_cublas_gemm
// NOBLAS: gpu.binary @ftpipe_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">
func.func @f(%a: tensor<2x16xf32>, %b: tensor<16x300xf32>) -> (tensor<2x300xf32>, tensor<2x300xf32>) {
  %zero = arith.constant 0.0 : f32
  %bias = arith.constant dense<[[0.5], [1.5]]> : tensor<2x1xf32>
  %empty = tensor.empty() : tensor<2x300xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x300xf32>) -> tensor<2x300xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<2x16xf32>, tensor<16x300xf32>) outs(%fill : tensor<2x300xf32>) -> tensor<2x300xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %bias : tensor<2x300xf32>, tensor<2x1xf32>) outs(%empty : tensor<2x300xf32>) {
  ^bb0(%x: f32, %c: f32, %y: f32):
    %s = arith.addf %x, %c : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<2x300xf32>
  %twice = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<2x300xf32>) outs(%empty : tensor<2x300xf32>) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.addf %x, %x : f32
    linalg.yield %d : f32
  } -> tensor<2x300xf32>
  return %out, %twice : tensor<2x300xf32>, tensor<2x300xf32>
}

// -----

// Tests that an integer power in a kernel compiles: NVPTX cannot select
// llvm.powi, what math.fpowi would become, so the power is a call of a
// generated function (a loop of multiplications) that kernel outlining
// copies into the GPU module.

// CHECK-LABEL: llvm.func @powi(
// CHECK: gpu.launch_func @[[MOD:[a-z_]+]]::@powi_kernel
// CHECK: gpu.binary @[[MOD]] [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, "{{.+}}">]
// CHECK: llvm.func linkonce_odr @__mlir_math_fpowi_f32_i32(
// NOBLAS-LABEL: llvm.func @powi(
// NOBLAS: gpu.binary
func.func @powi(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.constant 3 : i32
    %r = math.fpowi %a, %n : f32, i32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests a bias gradient's sum over the batch (a zero fill, then a
// linalg.reduce over the leading dimension): one kernel, whose threads each
// set their element to the fill's value and then add the batch into it
// (ftpipe-reductions-innermost, then the fusion of the two parallel loops),
// not a fill kernel and a reduction kernel.

// CHECK-LABEL: llvm.func @bias_grad(
// CHECK: gpu.launch_func @{{[a-z_]+}}::@bias_grad_kernel
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: llvm.func @_mlir_ciface_bias_grad(
// NOBLAS-LABEL: llvm.func @bias_grad(
func.func @bias_grad(%a: tensor<4x8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.reduce ins(%a : tensor<4x8x16xf32>) outs(%f : tensor<8x16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8x16xf32>
}
