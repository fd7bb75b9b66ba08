// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics \
// RUN:   --ftpipe-annotate-costs=hardware=%S/Inputs/slow-pair.json | FileCheck %s

// The slow-pair hardware runs 1e6 FLOP and moves 1e6 bytes per ms with no
// launch overhead, so every figure below is FLOPs or bytes / 1e6.

// Tests the rules on a small layer: a weight (parameter) seen through a view,
// a matmul whose only gradient goes to the weight, a tanh, a residual add,
// and an op on data alone (no backward).

// CHECK: module attributes {ftpipe.hardware = #ftpipe.hardware<name = "slow-pair"
// CHECK-LABEL: func.func @layer
func.func @layer(%w: tensor<64x64xf32> {ftpipe.param}, %x: tensor<1x64x64xf32>) -> tensor<1x64x64xf32> {
  // A view: no kernel, but it reads the parameter.
  // CHECK: tosa.reshape {{.*}}fwd_ms = 0.0, bwd_ms = 0.0, param_bytes = 16384, act_bytes = 0, out_bytes = 16384
  %a = tosa.reshape %w {new_shape = array<i64: 1, 64, 64>} : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
  // 2*64^3 FLOPs forward; one backward product (for the weight), which keeps %x:
  // all of the backward is the weight part (what a split backward's W runs).
  // CHECK: tosa.matmul {{.*}}fwd_ms = 0.524288, bwd_ms = 0.524288, param_bytes = 0, act_bytes = 16384, out_bytes = 16384, bwd_weight_ms = 0.524288>
  %b = tosa.matmul %x, %a : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  // Memory-bound: read 16 KiB, write 16 KiB; backward also reads what it kept.
  // No parameter gradient: no weight part.
  // CHECK: tosa.tanh {{.*}}fwd_ms = 0.032768, bwd_ms = 0.049152, param_bytes = 0, act_bytes = 16384, out_bytes = 16384>
  %c = tosa.tanh %b : (tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  // Linear: backward keeps nothing and writes one gradient (%x needs none).
  // CHECK: tosa.add {{.*}}fwd_ms = 0.049152, bwd_ms = 0.032768, param_bytes = 0, act_bytes = 0, out_bytes = 16384
  %d = tosa.add %c, %x : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  // No gradient flows through data alone.
  // CHECK: tosa.abs {{.*}}fwd_ms = 0.032768, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 16384
  %e = tosa.abs %x : (tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  return %d : tensor<1x64x64xf32>
}

// -----

// Tests the weight part of an op whose one backward kernel writes the
// gradients of an activation and of a parameter (a bias): the parameter's
// share of the gradient bytes it writes, 256 of 16384 + 256.

// CHECK-LABEL: func.func @bias
func.func @bias(%w: tensor<1x64x64xf32> {ftpipe.param}, %b: tensor<1x1x64xf32> {ftpipe.param}, %x: tensor<1x64x64xf32>) -> tensor<1x64x64xf32> {
  %m = tosa.matmul %x, %w : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  // Backward: 4096 FLOPs, 16384 + 16640 bytes: 0.033024 ms, of which
  // 0.033024 x 256 / 16640 is the bias's.
  // CHECK: tosa.add {{.*}}bwd_ms = 0.033024, {{.*}}, bwd_weight_ms = 0.000508062>
  %y = tosa.add %m, %b : (tensor<1x64x64xf32>, tensor<1x1x64xf32>) -> tensor<1x64x64xf32>
  return %y : tensor<1x64x64xf32>
}

// -----

// Tests an embedding lookup, a reduction and linalg ops: a gather's backward
// zero-fills the table gradient and keeps the indices; a linalg.matmul counts
// 2 FLOPs per point of its iteration space; a linalg.generic counts its body.

// CHECK-LABEL: func.func @lookup
func.func @lookup(%table: tensor<1x1000x16xf32> {ftpipe.param}, %ids: tensor<1x8xi32>, %w: tensor<16x16xf32> {ftpipe.param}) -> tensor<8x16xf32> {
  // The table's gradient is the only one: all weight part.
  // CHECK: tosa.gather {{.*}}fwd_ms = 0.001024, bwd_ms = 0.065024, param_bytes = 64000, act_bytes = 32, out_bytes = 512, bwd_weight_ms = 0.065024>
  %g = tosa.gather %table, %ids : (tensor<1x1000x16xf32>, tensor<1x8xi32>) -> tensor<1x8x16xf32>
  // CHECK: tosa.reduce_sum {{.*}}fwd_ms = 0.000544, bwd_ms = 0.000544, param_bytes = 0, act_bytes = 0, out_bytes = 32
  %s = tosa.reduce_sum %g {axis = 2 : i32} : (tensor<1x8x16xf32>) -> tensor<1x8x1xf32>
  %r = tosa.reshape %g {new_shape = array<i64: 8, 16>} : (tensor<1x8x16xf32>) -> tensor<8x16xf32>
  // CHECK: tensor.empty() {ftpipe.cost = #ftpipe.cost<fwd_ms = 0.0, bwd_ms = 0.0
  %init = tensor.empty() : tensor<8x16xf32>
  // Two backward products, one of them the weight's.
  // CHECK: linalg.matmul {{.*}}fwd_ms = 0.004096, bwd_ms = 0.008192, param_bytes = 1024, act_bytes = 512, out_bytes = 512, bwd_weight_ms = 0.004096>
  %m = linalg.matmul ins(%r, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  // Two body ops per point: 256 FLOPs; it reads two 512-byte operands and
  // writes 512; backward keeps %m but not the fresh buffer.
  // CHECK: linalg.generic {{.*}}fwd_ms = 0.001536, bwd_ms = 0.001536, param_bytes = 0, act_bytes = 512, out_bytes = 512
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x16xf32>) outs(%init : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %in : f32
    %u = arith.addf %t, %in : f32
    linalg.yield %u : f32
  } -> tensor<8x16xf32>
  return %o : tensor<8x16xf32>
}

// -----

// Tests that an op without a rule is flagged at its location and still costs
// its bytes (here only its result: the region captures %x).

// CHECK-LABEL: func.func @unknown
func.func @unknown(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  // expected-warning @+3 {{no cost rule for 'scf.execute_region': using a byte-based estimate}}
  // CHECK: scf.execute_region
  // CHECK: } {ftpipe.cost = #ftpipe.cost<fwd_ms = 0.004096,
  %r = scf.execute_region -> tensor<1024xf32> {
    scf.yield %x : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}


// -----

// Tests weights' transposes. A parameter matrix transposed for matrix
// products alone (through reshapes that only add unit dimensions, as the TOSA
// front end writes `x @ W^T`) costs nothing: code generation reads the weight
// in that layout (docs/Compile.md). Any other transpose moves its bytes: one
// whose result another op also reads, one of activations, and one whose
// reshape regroups dimensions or puts a unit dimension inside.

// CHECK-LABEL: func.func @weight_transposes
func.func @weight_transposes(%w: tensor<32x64xf32> {ftpipe.param}, %v: tensor<32x64xf32> {ftpipe.param}, %x: tensor<1x8x64xf32>, %y: tensor<1x8x32xf32>) -> (tensor<1x8x32xf32>, tensor<64x32xf32>, tensor<1x8x32xf32>, tensor<2x4x32xf32>, tensor<64x8x32xf32>) {
  %perm = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  // CHECK: tosa.transpose {{.*}}fwd_ms = 0.0, bwd_ms = 0.0, param_bytes = 8192, act_bytes = 0, out_bytes = 8192
  %wt = tosa.transpose %w, %perm : (tensor<32x64xf32>, tensor<2xi32>) -> tensor<64x32xf32>
  %wt3 = tosa.reshape %wt {new_shape = array<i64: 1, 64, 32>} : (tensor<64x32xf32>) -> tensor<1x64x32xf32>
  %a = tosa.matmul %x, %wt3 : (tensor<1x8x64xf32>, tensor<1x64x32xf32>) -> tensor<1x8x32xf32>
  // Also returned: written once (8 KiB read, 8 KiB written), and again backward.
  // CHECK: tosa.transpose {{.*}}fwd_ms = 0.016384, bwd_ms = 0.016384, param_bytes = 8192, act_bytes = 0, out_bytes = 8192
  %vt = tosa.transpose %v, %perm : (tensor<32x64xf32>, tensor<2xi32>) -> tensor<64x32xf32>
  %vt3 = tosa.reshape %vt {new_shape = array<i64: 1, 64, 32>} : (tensor<64x32xf32>) -> tensor<1x64x32xf32>
  %b = tosa.matmul %x, %vt3 : (tensor<1x8x64xf32>, tensor<1x64x32xf32>) -> tensor<1x8x32xf32>
  // Activations: no gradient flows, so no backward.
  // CHECK: tosa.transpose {{.*}}fwd_ms = 0.002048, bwd_ms = 0.0, param_bytes = 0, act_bytes = 0, out_bytes = 1024
  %perm3 = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %yt = tosa.transpose %y, %perm3 : (tensor<1x8x32xf32>, tensor<3xi32>) -> tensor<1x32x8xf32>
  %c = tosa.matmul %y, %yt : (tensor<1x8x32xf32>, tensor<1x32x8xf32>) -> tensor<1x8x8xf32>
  %c2 = tosa.matmul %c, %y : (tensor<1x8x8xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  // Regrouped into two heads of 32 before its product: a copy.
  // CHECK: tosa.transpose {{.*}}fwd_ms = 0.016384, bwd_ms = 0.016384, param_bytes = 8192, act_bytes = 0, out_bytes = 8192
  %ut = tosa.transpose %w, %perm : (tensor<32x64xf32>, tensor<2xi32>) -> tensor<64x32xf32>
  %ut2 = tosa.reshape %ut {new_shape = array<i64: 2, 32, 32>} : (tensor<64x32xf32>) -> tensor<2x32x32xf32>
  %x2 = tosa.reshape %x {new_shape = array<i64: 2, 4, 64>} : (tensor<1x8x64xf32>) -> tensor<2x4x64xf32>
  %xs = tosa.slice %x2 {start = array<i64: 0, 0, 0>, size = array<i64: 2, 4, 32>} : (tensor<2x4x64xf32>) -> tensor<2x4x32xf32>
  %d = tosa.matmul %xs, %ut2 : (tensor<2x4x32xf32>, tensor<2x32x32xf32>) -> tensor<2x4x32xf32>
  // A unit dimension in the middle makes the rows the batch: a copy.
  // CHECK: tosa.transpose {{.*}}fwd_ms = 0.016384, bwd_ms = 0.016384, param_bytes = 8192, act_bytes = 0, out_bytes = 8192
  %st = tosa.transpose %v, %perm : (tensor<32x64xf32>, tensor<2xi32>) -> tensor<64x32xf32>
  %st3 = tosa.reshape %st {new_shape = array<i64: 64, 1, 32>} : (tensor<64x32xf32>) -> tensor<64x1x32xf32>
  %x64 = tosa.reshape %x {new_shape = array<i64: 64, 1, 8>} : (tensor<1x8x64xf32>) -> tensor<64x1x8xf32>
  %e = tosa.matmul %x64, %st3 : (tensor<64x1x8xf32>, tensor<64x1x32xf32>) -> tensor<64x8x32xf32>
  return %a, %vt, %c2, %d, %e : tensor<1x8x32xf32>, tensor<64x32xf32>, tensor<1x8x32xf32>, tensor<2x4x32xf32>, tensor<64x8x32xf32>
}
