// RUN: ftpipe-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(ftpipe-clamp-gather-indices))' --verify-diagnostics | FileCheck %s

// Tests that a gather's indices are clamped to the rows of its table, the
// clamp keeping the gather's stage but not its cost.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TABLE:.*]]: tensor<1x512x64xf32>, %[[IDS:.*]]: tensor<1x32xi32>)
// CHECK: %[[SAFE:.*]] = tosa.clamp %[[IDS]] {ftpipe.index_guard, ftpipe.stage = 3 : i64, max_fp = 0.000000e+00 : f32, max_int = 511 : i64, min_fp = 0.000000e+00 : f32, min_int = 0 : i64}
// CHECK: tosa.gather %[[TABLE]], %[[SAFE]]
func.func @embedding(%table: tensor<1x512x64xf32>, %ids: tensor<1x32xi32>) -> tensor<1x32x64xf32> {
  %rows = tosa.gather %table, %ids {ftpipe.stage = 3 : i64, ftpipe.cost = #ftpipe.cost<fwd_ms = 1.0, bwd_ms = 1.0, param_bytes = 0, act_bytes = 0, out_bytes = 0>} : (tensor<1x512x64xf32>, tensor<1x32xi32>) -> tensor<1x32x64xf32>
  return %rows : tensor<1x32x64xf32>
}

// -----

// Tests that indices already clamped inside the table are left alone (the
// pass is idempotent), and that each gather gets its own table's bound.
// CHECK-LABEL: func.func @twice
// CHECK-COUNT-2: tosa.clamp
// CHECK-NOT: tosa.clamp
func.func @twice(%a: tensor<2x16x1xf32>, %b: tensor<2x4x1xf32>, %ids: tensor<2x1xi32>) -> (tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %safe = tosa.clamp %ids {max_fp = 0.0 : f32, max_int = 15 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<2x1xi32>) -> tensor<2x1xi32>
  %x = tosa.gather %a, %safe : (tensor<2x16x1xf32>, tensor<2x1xi32>) -> tensor<2x1x1xf32>
  %y = tosa.gather %b, %safe : (tensor<2x4x1xf32>, tensor<2x1xi32>) -> tensor<2x1x1xf32>
  return %x, %y : tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// -----

// Tests that a clamp whose bounds are not inside the table (a negative lower
// bound, an upper bound past the last row) is clamped again.
// CHECK-LABEL: func.func @loose
// CHECK-SAME: (%[[TABLE:.*]]: tensor<1x8x2xf32>, %[[IDS:.*]]: tensor<1x2xi32>)
// CHECK: %[[NEG:.*]] = tosa.clamp %[[IDS]] {{.*}}min_int = -5 : i64
// CHECK: %[[SAFE1:.*]] = tosa.clamp %[[NEG]] {{{.*}}max_int = 7 : i64{{.*}}min_int = 0 : i64}
// CHECK: tosa.gather %[[TABLE]], %[[SAFE1]]
// CHECK: %[[WIDE:.*]] = tosa.clamp %[[IDS]] {{.*}}max_int = 8 : i64
// CHECK: %[[SAFE2:.*]] = tosa.clamp %[[WIDE]] {{{.*}}max_int = 7 : i64{{.*}}min_int = 0 : i64}
// CHECK: tosa.gather %[[TABLE]], %[[SAFE2]]
func.func @loose(%table: tensor<1x8x2xf32>, %ids: tensor<1x2xi32>) -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>) {
  %neg = tosa.clamp %ids {max_fp = 0.0 : f32, max_int = 7 : i64, min_fp = 0.0 : f32, min_int = -5 : i64} : (tensor<1x2xi32>) -> tensor<1x2xi32>
  %x = tosa.gather %table, %neg : (tensor<1x8x2xf32>, tensor<1x2xi32>) -> tensor<1x2x2xf32>
  %wide = tosa.clamp %ids {max_fp = 0.0 : f32, max_int = 8 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<1x2xi32>) -> tensor<1x2xi32>
  %y = tosa.gather %table, %wide : (tensor<1x8x2xf32>, tensor<1x2xi32>) -> tensor<1x2x2xf32>
  return %x, %y : tensor<1x2x2xf32>, tensor<1x2x2xf32>
}

// -----

// Tests that a table of unknown size is an error at the gather.
func.func @dynamic(%table: tensor<1x?x4xf32>, %ids: tensor<1x2xi32>) -> tensor<1x2x4xf32> {
  // expected-error @below {{needs a static number of rows (dimension 1 of its values) to keep its indices inside the table}}
  %rows = tosa.gather %table, %ids : (tensor<1x?x4xf32>, tensor<1x2xi32>) -> tensor<1x2x4xf32>
  return %rows : tensor<1x2x4xf32>
}
